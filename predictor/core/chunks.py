"""Evaluations that scale out: test rows split into chunks, answered in worker processes.

A fitted method answers log rows with ``predict_rows(rows)`` (wait and runtime contracts,
``predictor.core.wait.types`` and ``predictor.core.runtime.types``). Each row's answer depends
on that row only (its arrival, the history known then, and models retrained at fixed
boundaries: ``predictor.core.state.retrain``), never on which other rows are asked for in the
same call. So the rows can be cut into contiguous chunks, answered anywhere, and put back in
order: the merged answer equals the one-process answer exactly (``tests/core/test_chunks.py``
checks every registered method on a small log).

Here the chunks run in local worker processes (``jobs`` of them; ``spawn`` processes, each
unpickling the fitted method once: a forked child of a process that already ran OpenMP code,
as scikit-learn's gradient boosting does, can hang). With a Celery broker the service layer
passes a :class:`ChunkRunner` instead (``predictor.services.fanout``: one Celery task per chunk);
the splitting and merging are these functions either way.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass, replace
from typing import Any, Protocol, cast

import numpy as np

Progress = Callable[[float], None] | None
CHUNKS_PER_JOB = 4  # a few chunks per worker evens out slow and fast parts of a log
MIN_CHUNK = 200  # below this the process start-up costs more than it saves


def split_rows(
    rows: np.ndarray, n_chunks: int, blocks: np.ndarray | None = None
) -> list[np.ndarray]:
    """``rows`` cut into ``n_chunks`` contiguous, near-equal chunks (none empty), in order.

    ``blocks``: a label per row, the model it is answered with (a method retrained at row
    boundaries: :meth:`predictor.core.wait.gbm.WaitGBM.row_blocks`). Chunks are then cut only
    where the label changes, at the change nearest each even cut (fewer chunks when two even
    cuts share one), so no model is needed by two chunks, i.e. trained in two processes.
    """
    rows = np.asarray(rows)
    if n_chunks < 1:
        raise ValueError(f"n_chunks must be >= 1, got {n_chunks}")
    n_chunks = max(1, min(n_chunks, rows.size))
    if blocks is None:
        return [c for c in np.array_split(rows, n_chunks) if c.size]
    changes = np.flatnonzero(np.diff(np.asarray(blocks)) != 0) + 1
    if changes.size == 0 or n_chunks == 1:
        return [rows]
    even = np.arange(1, n_chunks) * rows.size // n_chunks
    right = np.minimum(np.searchsorted(changes, even), changes.size - 1)
    left = np.maximum(right - 1, 0)
    nearest = np.where(
        np.abs(changes[left] - even) <= np.abs(changes[right] - even), changes[left], changes[right]
    )
    return [c for c in np.split(rows, np.unique(nearest)) if c.size]


def chunk_count(n_rows: int, jobs: int) -> int:
    """How many chunks ``jobs`` workers get: ``CHUNKS_PER_JOB`` each, none under ``MIN_CHUNK``."""
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if jobs == 1:
        return 1
    return max(1, min(jobs * CHUNKS_PER_JOB, n_rows // MIN_CHUNK))


def merge(parts: Sequence[Any]) -> Any:
    """Concatenate chunk answers in order: every array, list and dict-of-arrays field.

    Works for ``WaitPrediction`` (arrays, optional arrays, ``extra`` dict) and
    ``RuntimePrediction`` (a list of rangeSets); a field that is None in every part stays None.
    """
    if not parts:
        raise ValueError("nothing to merge")
    first = parts[0]
    if not is_dataclass(first):
        raise TypeError(f"cannot merge {type(first).__name__}: not a dataclass")
    values = {}
    for f in fields(first):
        items = [getattr(p, f.name) for p in parts]
        values[f.name] = _concat(f.name, items)
    return replace(cast(Any, first), **values)


def _concat(name: str, items: list[Any]) -> Any:
    if all(v is None for v in items):
        return None
    if any(v is None for v in items):
        raise ValueError(f"field {name!r} is missing from some chunks")
    if isinstance(items[0], np.ndarray):
        return np.concatenate(items)
    if isinstance(items[0], list):
        return [x for v in items for x in v]
    if isinstance(items[0], dict):
        keys = set(items[0])
        if any(set(v) != keys for v in items):
            raise ValueError(f"field {name!r} has different keys in different chunks")
        return {k: np.concatenate([v[k] for v in items]) for k in items[0]}
    raise TypeError(f"cannot merge field {name!r} of type {type(items[0]).__name__}")


class Sent(Protocol):
    """One method's chunks on their way (:meth:`ChunkRunner.start`)."""

    def gather(self, progress: Progress) -> list[Any]:
        """Wait for every chunk (answering some here) and return their answers in order."""
        ...

    def cancel(self) -> None:
        """Drop the chunks (a run that fails before gathering them)."""
        ...


class ChunkRunner(Protocol):
    """Answers the chunks of one method somewhere else (another process, another host).

    ``chunk_count(n_rows)`` says how to cut ``n_rows`` targets; ``start(name, method, chunks)``
    sends them and returns at once (:class:`Sent`), so that the caller can fit the next
    method while workers answer; ``run(...)`` is ``start(...).gather(progress)``: one answer
    per chunk, in order. ``name`` is the method's registry name (a remote worker fits its own
    copy by it); ``method`` is the fitted local copy.
    """

    def chunk_count(self, n_rows: int) -> int: ...

    def start(self, name: str, method: Any, parts: list[np.ndarray]) -> Sent: ...

    def run(
        self, name: str, method: Any, parts: list[np.ndarray], progress: Progress
    ) -> list[Any]: ...


def start_rows(method: Any, rows: np.ndarray, *, runner: ChunkRunner, name: str) -> Sent:
    """Send ``method``'s ``rows`` to ``runner`` cut as :func:`predict_rows` cuts them, without
    waiting: workers answer while this process does something else (fits the next method).
    ``merge(sent.gather(progress))`` is then ``method.predict_rows(rows)``. ``rows`` must not
    be empty."""
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        raise ValueError("no rows to send")
    return runner.start(name, method, _runner_parts(method, rows, runner))


_WORKER: dict[str, Any] = {}


def _init_worker(method_bytes: bytes) -> None:
    from threadpoolctl import threadpool_limits

    _WORKER["method"] = pickle.loads(method_bytes)
    _WORKER["limits"] = threadpool_limits(1)  # one worker = one core


def _run_chunk(args: tuple[int, np.ndarray]) -> tuple[int, Any]:
    k, rows = args
    return k, _WORKER["method"].predict_rows(rows)


def _runner_parts(method: Any, rows: np.ndarray, runner: ChunkRunner) -> list[np.ndarray]:
    row_blocks = getattr(method, "row_blocks", None)
    blocks = row_blocks(rows) if row_blocks is not None else None
    return split_rows(rows, runner.chunk_count(rows.size), blocks)


def predict_rows(
    method: Any,
    rows: np.ndarray,
    *,
    jobs: int = 1,
    progress: Progress = None,
    n_chunks: int | None = None,
    runner: ChunkRunner | None = None,
    name: str = "",
) -> Any:
    """``method.predict_rows(rows)`` answered in ``jobs`` worker processes, merged in order.

    ``jobs = 1`` calls the method directly (its own progress bar). The method must be fitted.
    ``n_chunks`` overrides :func:`chunk_count`. A ``runner`` (then ``jobs`` is ignored) answers
    the chunks instead of local processes; ``name`` is the method's registry name for it.
    """
    rows = np.asarray(rows, dtype=np.int64)
    row_blocks = getattr(method, "row_blocks", None)
    if runner is not None and rows.size:
        return merge(runner.run(name, method, _runner_parts(method, rows, runner), progress))
    n_chunks = chunk_count(rows.size, jobs) if n_chunks is None else n_chunks
    if jobs == 1:
        n_chunks = 1
    if n_chunks == 1:
        return method.predict_rows(rows, progress=progress)
    chunks = split_rows(rows, n_chunks, row_blocks(rows) if row_blocks is not None else None)
    payload = pickle.dumps(method, protocol=pickle.HIGHEST_PROTOCOL)
    out: list[Any] = [None] * len(chunks)
    ctx = mp.get_context("spawn")
    with ctx.Pool(min(jobs, len(chunks)), initializer=_init_worker, initargs=(payload,)) as pool:
        done = 0
        for k, part in pool.imap_unordered(_run_chunk, list(enumerate(chunks))):
            out[k] = part
            done += chunks[k].size
            if progress is not None:
                progress(done / rows.size)
    return merge(out)
