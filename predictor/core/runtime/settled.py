"""Answers kept for a settled history: a queued job is not predicted again at every instant.

A live site (and a replay, which decides as one) asks its fitted runtime method for every
running and queued job at every arrival, to run the queue forward; the same jobs, asked
again and again while they wait. After its history has *settled* (the instant ``t`` is past
every fitted job's submission and known end) a method's answer for a request changes with
``t`` only through what the method says in its ``settled_key(snapshot)``: for the quantile
GBM and density rangeSets, which side of each tree's split on the predicted load the load at
``t`` falls (``QuantileGBRange.settled_key``); everything else they read (the group's past
runtimes, the user's last runtimes, the retraining block, the level) is the whole history.
So two instants with the same key give every request the same rangeSet, and
:class:`SettledAnswers` hands back the one computed before (the requests not kept are
predicted together, as a batch gives the same answers as one by one:
``tests/core/test_contract.py``). A method without a key (None) is always asked.

Bounded: at most ``size`` answers (least recently used dropped), thread-safe, never pickled.
The arrays of a kept rangeSet are read-only, so no caller can change a kept answer.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from predictor.core.lru import LRU
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.state.request import RequestBatch

#: the request fields an answer may read (the job id never enters a prediction)
FIELDS = ("user", "procs", "req_time_s", "submit_s", "group", "queue", "partition", "executable",
          "req_mem")  # fmt: skip


class SettledAnswers:
    """Rangesets kept per (settled key, request) (module docstring)."""

    def __init__(self, size: int = 20000) -> None:
        self.kept: LRU[RangeSet] = LRU(size=size)

    @property
    def hits(self) -> int:
        return self.kept.hits

    @property
    def misses(self) -> int:
        return self.kept.misses

    def answer(
        self,
        key: Hashable,
        batch: RequestBatch,
        compute: Callable[[RequestBatch], list[RangeSet]],
    ) -> list[RangeSet]:
        """The rangeSet of every request of ``batch``: kept ones, the rest from
        ``compute(sub_batch)`` (then kept)."""
        cols = np.column_stack([getattr(batch, f).astype(np.float64) for f in FIELDS])
        keys = [(key, row.tobytes()) for row in cols]
        out = self.kept.get_many(keys)
        missing = [k for k, got in enumerate(out) if got is None]
        if missing:
            fresh = compute(batch.take(np.asarray(missing, dtype=np.int64)))
            for k, ranges in zip(missing, fresh, strict=True):
                for a in (ranges.low_s, ranges.high_s, ranges.probability):
                    a.flags.writeable = False
                out[k] = ranges
            self.kept.put_many((keys[k], r, 0) for k, r in zip(missing, fresh, strict=True))
        return [r for r in out if r is not None]
