"""Each log row's own-arrival wait prediction (and other per-instant values), shared by every
process through the store.

An answer's trust block re-scores the ~300 jobs that most recently started by its instant
(``predictor.core.wait.recent``). A process memoises each row's prediction
(:class:`~predictor.core.wait.row_memo.RowWaitMemo`), but each web worker used to pay a new
instant's rows again (a few seconds; minutes with ``auto``, docs/results.md, issue 18). So the
memo is kept in the store (``rows-<trace id>-<version>.pkl``, the file ``warm_predictions``
writes for every row): before a process predicts rows for a new instant it reads the rows
other processes stored, and after it predicted some it merges them into the file under the
store's ``rows`` lock (a short read-merge-write; single flight is not needed: two processes
predicting the same row store the same number). So a past instant's pool is computed once
for all processes. The runtime accuracy's per-row terms are kept the same way, in their own
file (``runtime_rows_<bundle kind>-<trace id>-<version>.pkl``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from predictor.core.runtime.row_scores import RuntimeRowScores
from predictor.core.wait.row_memo import RowWaitMemo
from predictor.services.fitted_store import FittedStore

KIND = "rows"
RowMemo = RowWaitMemo | RuntimeRowScores  # per-row values (``values``, ``known``, ``lock``)
SHARED_VALUES = 4096  # per-instant values kept per file (the oldest go first)


def read_into(store: FittedStore, ident: str, version: str, memo: RowMemo, kind: str = KIND) -> int:
    """Copy the stored rows this memo does not know yet into it; returns how many. ``kind``:
    the store's file kind (``rows`` for the wait method's; ``runtime_rows-...`` for the
    runtime accuracy's terms, :class:`~predictor.core.runtime.row_scores.RuntimeRowScores`)."""
    stored = store.load(kind, ident, version)
    if stored is None or stored["values"].size != memo.values.size:
        return 0
    with memo.lock:
        new = stored["known"] & ~memo.known
        memo.values[new] = stored["values"][new]
        memo.known[new] = True
    return int(new.sum())


def merge_into_store(
    store: FittedStore, ident: str, version: str, memo: RowMemo, kind: str = KIND
) -> None:
    """Store the union of the stored rows and this memo's (under the ``kind`` lock, so that
    two processes merging at once lose none)."""
    with store.lock(f"{kind}-merge", ident):
        stored = store.load(kind, ident, version)
        with memo.lock:
            values, known = memo.values.copy(), memo.known.copy()
        if stored is not None and stored["values"].size == values.size:
            add = stored["known"] & ~known
            values[add] = stored["values"][add]
            known |= stored["known"]
        store.save(kind, ident, version, {"values": values, "known": known})


def through_store(
    store: FittedStore,
    ident: str,
    version: str,
    memo: RowMemo,
    compute: Callable[[], Any],
    kind: str = KIND,
) -> Any:
    """``compute()`` (which fills ``memo``) with the rows other processes stored read into
    ``memo`` first, and the rows it predicted merged into the store after, when it predicted
    any: a new instant's pool is paid once for every process."""
    read_into(store, ident, version, memo, kind)
    before = memo.predicted
    value = compute()
    if memo.predicted > before:
        merge_into_store(store, ident, version, memo, kind)
    return value


def shared_value(
    store: FittedStore,
    kind: str,
    ident: str,
    version: str,
    key: Any,
    compute: Callable[[], Any],
    local: dict[Any, Any] | None = None,
) -> Any:
    """The value of ``key`` (an instant) from the store's ``kind`` file, else computed here
    and merged into it under the lock: a per-instant value computed once for every process
    (the runtime method's recent accuracy at an instant).

    ``local``: the process's own copy. A hit there reads no file; a miss copies every stored
    value into it (one read serves every instant another process stored), so a process that
    asked for an instant before never unpickles the file again. Unpickling the whole file on
    each request whose instant had fallen out of a 64-entry local cache cost 2.6 ms of a
    5 ms warm KTH answer (docs/results.md, issue 18, ninth round)."""
    if local is not None and key in local:
        return local[key]
    stored = store.load(kind, ident, version) or {}
    if local is not None:
        keep(local, stored)
    if key in stored:
        return stored[key]
    value = compute()
    with store.lock(f"{kind}-merge", ident):
        stored = store.load(kind, ident, version) or {}
        stored[key] = value
        _bound(stored)
        store.save(kind, ident, version, stored)
    if local is not None:
        keep(local, {key: value})
    return value


def _bound(values: dict[Any, Any]) -> None:
    """Drop the oldest entries beyond :data:`SHARED_VALUES`."""
    while len(values) > SHARED_VALUES:
        values.pop(next(iter(values)))


def keep(local: dict[Any, Any], values: dict[Any, Any]) -> None:
    """Add ``values`` to a process's own copy, the oldest dropped beyond the bound."""
    local.update(values)
    _bound(local)
