"""Fits shared by the replays of one evaluation when their simulated pasts are equal.

An evaluation with the guard chosen on the tuning part replays that part once per guard and
per hold threshold (``guard.choose_guard``, ``guard.choose_hold``). Every one of those replays
is the plain one until its first decision: the same jobs have finished when it fits its
bundle at that decision, with the same simulated waits and runtimes, so the same finished
history goes to ``fit_bundle``. Their later refits differ (on SDSC-SP2's first 4,000 jobs
the four guard replays' second fits were four different histories), so a replay keeps only
its first fit in the memo; a later one is looked up but not kept (each would hold a bundle
in memory, and a whole log's bundles are large).

A fit is a function of its history frame and its settings (``random_state`` injected, every
cache inside a bundle answers as a fresh computation does: ``predictor.core.bundle``), so a
fitted bundle may answer for every replay whose history equals the one it was fitted on.
Fitting once and reusing the bundle (with what it computed lazily, such as ``auto``'s scored
pool) gives the same answers, decisions and figures, at the cost of one fit; on SDSC-SP2's
tuning part a fit and its first answer cost about 12 CPU-s (docs/results.md, issue 18).

The memo keeps at most ``size`` bundles (those asked to be kept), the most recently used,
and matches a history by
its settings, its length, a digest of its values, then ``DataFrame.equals``: never by the
digest alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from predictor.core.lru import LRU


@dataclass
class _Entry:
    frame: pd.DataFrame
    value: Any


class FitMemo:
    """``fit(frame)`` once per equal ``(settings, frame)``, for the last ``size`` of them.

    ``hits`` and ``misses`` count the lookups (reported with the evaluation's figures).
    """

    def __init__(self, size: int = 2) -> None:
        self.size = size
        self.hits = 0
        self.misses = 0
        self._entries: LRU[_Entry] = LRU(size=size)

    def get(
        self, settings: Hashable, frame: pd.DataFrame, fit: Callable[[], Any], keep: bool = True
    ) -> Any:
        """The value ``fit()`` returned for an equal frame under equal ``settings``, or a new
        one (with ``keep``, kept: the least recently used entry dropped beyond ``size``)."""
        key = (settings, len(frame), digest(frame))
        entry = self._entries.get(key)
        if entry is not None and entry.frame.equals(frame):
            self.hits += 1
            return entry.value
        self.misses += 1
        value = fit()
        if keep:
            self._entries.put(key, _Entry(frame.copy(), value))
        return value

    def as_dict(self) -> dict[str, int]:
        return {"fits_shared": self.hits, "fits_run": self.misses, "kept_at_most": self.size}


def digest(frame: pd.DataFrame) -> str:
    """A digest of the frame's column names and values (row order included)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(repr(list(frame.columns)).encode())
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()
