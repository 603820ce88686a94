"""Who a wait method answers for: log rows (the evaluation's fast path) or requests in a
snapshot (the public ``predict``). Both become one :class:`WaitTargets`, so every method runs
the same code on both and the answers are identical (``tests/core/test_contract.py``).

For target k, ``known_at_s[k]`` and ``n_before[k]`` bound the history: a log row j is history
only if it is one of the first ``n_before[k]`` rows and its fact was known at ``known_at_s[k]``
(its start for a wait, with ties at that second broken by row order). A log row i is the
arrival ``known_at = submit_i``, ``n_before = i``; a snapshot gives its ``known_at_s`` and the
rows of the fitted log that had arrived by then (:meth:`Snapshot.arrived_rows`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from predictor.core.state.features import state_features
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import Snapshot
from predictor.core.wait.types import WaitContext


@dataclass(frozen=True)
class TargetState:
    """The state columns of targets (``predictor.core.state.sweep`` columns, row k = target k)
    and their exact value sets (k -> six arrays, for APQ's union binning)."""

    summary: np.ndarray
    hist: np.ndarray
    wait_count: np.ndarray
    run_count: np.ndarray
    values: Callable[[int], list[np.ndarray]]

    @classmethod
    def rows_of(
        cls, columns: Any, index: np.ndarray, values: Callable[[int], list[np.ndarray]]
    ) -> TargetState:
        """Rows ``index`` of ``columns``' four state columns (a sweep or a target state)."""
        return cls(
            summary=columns.summary[index],
            hist=columns.hist[index],
            wait_count=columns.wait_count[index],
            run_count=columns.run_count[index],
            values=values,
        )


@dataclass(frozen=True)
class WaitTargets:
    """Targets as columns (row k = target k).

    requests : what each target asks for (its arrival is ``requests.submit_s``).
    known_at_s, n_before : the history bound (module docstring).
    state : computes the targets' :class:`TargetState`, on first use only (QBETS and the
        median need none of it); ``summary``, ``hist``, ``wait_count``, ``run_count`` and
        ``values`` read it.
    rows : the log rows, when the targets are log rows (None for requests in a snapshot).
    snapshot : the snapshot, when the targets are requests in one.
    """

    requests: RequestBatch
    known_at_s: np.ndarray
    n_before: np.ndarray
    state: Callable[[], TargetState]
    rows: np.ndarray | None = None
    snapshot: Snapshot | None = None

    def __len__(self) -> int:
        return len(self.requests)

    @cached_property
    def _state(self) -> TargetState:
        return self.state()

    @property
    def summary(self) -> np.ndarray:
        return self._state.summary

    @property
    def hist(self) -> np.ndarray:
        return self._state.hist

    @property
    def wait_count(self) -> np.ndarray:
        return self._state.wait_count

    @property
    def run_count(self) -> np.ndarray:
        return self._state.run_count

    def values(self, k: int) -> list[np.ndarray]:
        return self._state.values(k)

    def take(self, index: np.ndarray) -> WaitTargets:
        """The targets at positions ``index``, sharing this batch's state (computed once)."""
        index = np.asarray(index, dtype=np.int64)

        def state() -> TargetState:
            s = self._state
            return TargetState.rows_of(s, index, lambda k: s.values(int(index[k])))

        return WaitTargets(
            requests=self.requests.take(index),
            known_at_s=self.known_at_s[index],
            n_before=self.n_before[index],
            state=state,
            rows=None if self.rows is None else self.rows[index],
            snapshot=self.snapshot,
        )

    @classmethod
    def from_rows(cls, ctx: WaitContext, rows: np.ndarray) -> WaitTargets:
        """Log rows of ``ctx``, each at its own arrival."""
        rows = np.asarray(rows, dtype=np.int64)
        sweep = ctx.state

        def state() -> TargetState:
            return TargetState.rows_of(sweep, rows, lambda k: sweep.hist_values(int(rows[k])))

        return cls(
            requests=RequestBatch.from_jobs(ctx.jobs.iloc[rows]),
            known_at_s=ctx.jobs["submit_time"].to_numpy(np.float64)[rows],
            n_before=rows,
            state=state,
            rows=rows,
        )

    @classmethod
    def from_snapshot(
        cls, ctx: WaitContext, snapshot: Snapshot, requests: RequestBatch
    ) -> WaitTargets:
        """Requests arriving in ``snapshot``; history from ``ctx`` as known at its instant."""
        bins = ctx.state.edges.shape[1] - 1

        def state() -> TargetState:
            f = state_features(snapshot, requests, hist_bins=bins)
            return TargetState(f.summary, f.hist, f.wait_count, f.run_count, f.values)

        n = len(requests)
        arrived = snapshot.arrived_rows(ctx.jobs["submit_time"].to_numpy(np.float64))
        return cls(
            requests=requests,
            known_at_s=np.full(n, snapshot.known_at_s),
            n_before=np.full(n, arrived, dtype=np.int64),
            state=state,
            snapshot=snapshot,
        )
