"""The queue a request joins: what the EASY forward needs, built from a snapshot.

Every job is assumed to run for its estimate, as the scheduler assumes: its requested time,
or (no request given) a fallback the caller supplies, e.g. the runtime method's point
estimate. A running job is expected to end at ``start + estimate``; one already past that
is expected to end in a second (``pyss_adapter.core.start_estimate``'s rule).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictor.core.state.snapshot import Snapshot

MIN_ESTIMATE_S = 1.0


@dataclass(frozen=True)
class QueueState:
    """The queue at ``now_s``.

    running_end_s, running_procs : (R,) expected ends (absolute seconds) and processors held.
    queue_procs, queue_estimate_s : (Q,) the waiting jobs in arrival order (processors
        requested, estimate in seconds).
    """

    now_s: float
    machine_procs: int
    running_end_s: np.ndarray
    running_procs: np.ndarray
    queue_procs: np.ndarray
    queue_estimate_s: np.ndarray

    @property
    def free_procs(self) -> int:
        return int(self.machine_procs - self.running_procs.sum())

    def remaining_s(self) -> np.ndarray:
        """Time each running job is expected to run on, at least one second."""
        return np.maximum(self.running_end_s, self.now_s + 1.0) - self.now_s


def estimates(req_time_s: np.ndarray, fallback_s: np.ndarray | None) -> np.ndarray:
    """Requested time where given (> 0), else the fallback, at least one second."""
    req = np.asarray(req_time_s, dtype=float)
    fb = np.zeros_like(req) if fallback_s is None else np.asarray(fallback_s, dtype=float)
    return np.maximum(np.where(req > 0, req, fb), MIN_ESTIMATE_S)


def from_snapshot(
    snapshot: Snapshot,
    running_fallback_s: np.ndarray | None = None,
    waiting_fallback_s: np.ndarray | None = None,
) -> QueueState:
    """The queue of ``snapshot`` (fallbacks: estimates for jobs without a requested time)."""
    run, wait = snapshot.running, snapshot.waiting
    mp = int(snapshot.machine_procs)
    run_est = estimates(run.requests.req_time_s, running_fallback_s)
    return QueueState(
        now_s=float(snapshot.time_s),
        machine_procs=mp,
        running_end_s=run.start_s.astype(float) + run_est,
        running_procs=np.minimum(run.used_procs.astype(np.int64), mp),
        queue_procs=np.clip(wait.requests.procs.astype(np.int64), 1, mp),
        queue_estimate_s=estimates(wait.requests.req_time_s, waiting_fallback_s),
    )
