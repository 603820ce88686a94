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

import numpy as np

from predictor.core.state.features import state_features
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import Snapshot
from predictor.core.wait.types import WaitContext


@dataclass(frozen=True)
class WaitTargets:
    """Targets as columns (row k = target k).

    requests : what each target asks for (its arrival is ``requests.submit_s``).
    summary, hist, wait_count, run_count : its state (``predictor.core.state.sweep`` columns).
    known_at_s, n_before : the history bound (module docstring).
    values : k -> the six exact value sets (APQ's union binning only).
    rows : the log rows, when the targets are log rows (None for requests in a snapshot).
    snapshot : the snapshot, when the targets are requests in one.
    """

    requests: RequestBatch
    summary: np.ndarray
    hist: np.ndarray
    wait_count: np.ndarray
    run_count: np.ndarray
    known_at_s: np.ndarray
    n_before: np.ndarray
    values: Callable[[int], list[np.ndarray]]
    rows: np.ndarray | None = None
    snapshot: Snapshot | None = None

    def __len__(self) -> int:
        return len(self.requests)

    @classmethod
    def from_rows(cls, ctx: WaitContext, rows: np.ndarray) -> WaitTargets:
        """Log rows of ``ctx``, each at its own arrival."""
        rows = np.asarray(rows, dtype=np.int64)
        sweep = ctx.state
        return cls(
            requests=RequestBatch.from_jobs(ctx.jobs.iloc[rows]),
            summary=sweep.summary[rows],
            hist=sweep.hist[rows],
            wait_count=sweep.wait_count[rows],
            run_count=sweep.run_count[rows],
            known_at_s=ctx.jobs["submit_time"].to_numpy(np.float64)[rows],
            n_before=rows,
            values=lambda k: sweep.hist_values(int(rows[k])),
            rows=rows,
        )

    @classmethod
    def from_snapshot(
        cls, ctx: WaitContext, snapshot: Snapshot, requests: RequestBatch
    ) -> WaitTargets:
        """Requests arriving in ``snapshot``; history from ``ctx`` as known at its instant."""
        bins = ctx.state.edges.shape[1] - 1
        feats = state_features(snapshot, requests, hist_bins=bins)
        n = len(requests)
        arrived = snapshot.arrived_rows(ctx.jobs["submit_time"].to_numpy(np.float64))
        return cls(
            requests=requests,
            summary=feats.summary,
            hist=feats.hist,
            wait_count=feats.wait_count,
            run_count=feats.run_count,
            known_at_s=np.full(n, snapshot.known_at_s),
            n_before=np.full(n, arrived, dtype=np.int64),
            values=feats.values,
            snapshot=snapshot,
        )
