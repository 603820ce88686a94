"""Which jobs are targets, and which past jobs a target may look at ("Time and leakage").

Every queue-wait method shares these two rules so that all of them see exactly the same
history and are scored on exactly the same jobs.

* A job is *usable* (as a target and as history) when it has a submit time, a known wait
  (``wait >= 0``) and it ran (run time >= 0 and a non-zero processor count). Jobs that never
  ran still count in the queue state, which :mod:`predictor.core.state.sweep` handles.
* For a target row ``i`` submitted at ``t = submit_i``, a usable row ``j`` is history iff
  ``start_j < t`` or (``start_j == t`` and ``j < i``), with ``start_j = submit_j + wait_j``.
  Ties at ``t`` are broken by row order so that the target itself, and any job submitted at
  the same instant after it, are never history. The history is therefore a *prefix* of the
  usable jobs sorted by ``(start, row)``, and :meth:`KnownHistory.prefix` finds its length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from predictor.core.state.sweep import known_submit

SIZE_EDGES = np.array([4, 16, 64])  # size classes 1-4, 5-16, 17-64, 65+ (QBETS groups)


def requested_procs(jobs: pd.DataFrame) -> np.ndarray:
    """Requested processors (SWF field 8), falling back to allocated (field 5)."""
    req = jobs["requested_procs"].to_numpy(dtype=float)
    alloc = jobs["allocated_procs"].to_numpy(dtype=float)
    return np.where(req > 0, req, alloc)


def size_class(procs: np.ndarray) -> np.ndarray:
    """Size class 0..3 for 1-4, 5-16, 17-64, 65+ processors."""
    return np.searchsorted(SIZE_EDGES, np.asarray(procs, dtype=float), side="left")


def usable_mask(jobs: pd.DataFrame) -> tuple[np.ndarray, dict[str, int]]:
    """Rows that may be targets and history, and how many were left out and why.

    Returns
    -------
    mask : (n,) bool
    excluded : reason -> count; each left-out row is counted under its first reason.
    """
    submit = jobs["submit_time"].to_numpy(dtype=float)
    wait = jobs["wait_time"].to_numpy(dtype=float)
    run = jobs["run_time"].to_numpy(dtype=float)
    alloc = jobs["allocated_procs"].to_numpy(dtype=float)
    procs = requested_procs(jobs)
    reasons = {
        "no_submit_time": ~known_submit(submit),
        "unknown_wait": wait < 0,
        "never_ran_no_runtime": run < 0,
        "never_ran_zero_procs": (alloc == 0) | (procs <= 0),
    }
    left = np.zeros(len(jobs), dtype=bool)
    excluded: dict[str, int] = {}
    for reason, bad in reasons.items():
        new = bad & ~left
        excluded[reason] = int(new.sum())
        left |= new
    return ~left, excluded


@dataclass
class KnownHistory:
    """Usable jobs in ``(start, row)`` order, for prefix look-ups.

    Attributes
    ----------
    order : (m,) row indices of the usable jobs sorted by (start time, row).
    start_s : (m,) their start times, ascending.
    """

    order: np.ndarray
    start_s: np.ndarray

    @classmethod
    def from_jobs(cls, jobs: pd.DataFrame, mask: np.ndarray | None = None) -> KnownHistory:
        if mask is None:
            mask, _ = usable_mask(jobs)
        rows = np.flatnonzero(mask)
        start = (
            jobs["submit_time"].to_numpy(dtype=float) + jobs["wait_time"].to_numpy(dtype=float)
        )[rows]
        idx = np.lexsort((rows, start))
        return cls(order=rows[idx], start_s=start[idx])

    def prefix(self, at_s: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Length of the known history for each query.

        ``at_s`` are query times; ``rows`` the query's own row (ties at ``at_s`` count only
        rows before it). Without ``rows`` every job started at or before ``at_s`` counts (API use,
        where the query is a new job after all rows).
        """
        at_s = np.atleast_1d(np.asarray(at_s, dtype=float))
        if rows is None:
            return np.searchsorted(self.start_s, at_s, side="right")
        rows = np.atleast_1d(np.asarray(rows))
        lo = np.searchsorted(self.start_s, at_s, side="left")
        hi = np.searchsorted(self.start_s, at_s, side="right")
        out = lo.copy()
        for k in np.flatnonzero(hi > lo):  # ties are rare: same start time as the query
            out[k] = lo[k] + np.searchsorted(self.order[lo[k] : hi[k]], rows[k], side="left")
        return out
