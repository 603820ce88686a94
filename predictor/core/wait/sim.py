"""What ``squeue --start`` does: simulate the queue forward with EASY and requested times.

Wraps ``pyss_adapter.core.start_estimate.simulated_waits``; nothing to learn. For log rows the
running and queued jobs at each arrival come from the log (real starts); for requests in a
snapshot they are the snapshot's running jobs (start + requested time) and waiting jobs in
arrival order, the request queued last (computed in arrays: ``snapshot_wait``). Requests are
simulated one by one: a candidate never waits behind another candidate of the same batch
(requests arriving together are read off one run of their queue: ``snapshot_waits``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import ActiveJobs, Snapshot
from predictor.core.wait.base import Progress, WaitEstimator
from predictor.core.wait.targets import WaitTargets
from predictor.core.wait.types import WaitPrediction

FAR_S = 1e12  # a waiting job's start, beyond any simulated horizon


def _frame(jobs: ActiveJobs, wait_s: np.ndarray, run_s: np.ndarray) -> pd.DataFrame:
    r = jobs.requests
    return pd.DataFrame(
        {
            "submit_time": r.submit_s,
            "wait_time": wait_s,
            "run_time": run_s,
            "allocated_procs": np.where(np.isfinite(jobs.start_s), jobs.used_procs, r.procs),
            "requested_procs": r.procs,
            "requested_time": np.where(r.req_time_s > 0, r.req_time_s, -1.0),
        }
    )


def snapshot_frame(snapshot: Snapshot) -> pd.DataFrame:
    """The snapshot's running then waiting jobs as SWF-like rows, ready for a request row.

    A running job's runtime is unknown: ``run_time`` only keeps it running in the simulator's
    sweep (its end is after the snapshot); its estimate is its requested time, or, without
    one, the snapshot's next second (a log row would use its real runtime there).
    """
    run, wait = snapshot.running, snapshot.waiting
    t = snapshot.time_s
    running = _frame(run, run.start_s - run.requests.submit_s, t - run.start_s + 1.0)
    waiting = _frame(wait, np.full(len(wait), FAR_S), np.ones(len(wait)))
    return pd.concat([running, waiting], ignore_index=True)


class SimulatedStart(WaitEstimator):
    """EASY forward from the state at the arrival, every job running for its request."""

    name = "sim"

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        from pyss_adapter.core.start_estimate import simulated_waits

        ctx = self.history_
        if targets.rows is not None:
            waits = simulated_waits(ctx.jobs, targets.rows, ctx.machine_procs)
            return WaitPrediction(wait_s=np.maximum(np.asarray(waits, dtype=float), 0.0))
        snapshot = targets.snapshot
        if snapshot is None:
            raise ValueError("targets have neither log rows nor a snapshot")
        return WaitPrediction(wait_s=np.maximum(snapshot_waits(snapshot, targets.requests), 0.0))


def snapshot_waits(snapshot: Snapshot, requests: RequestBatch) -> np.ndarray:
    """Every request's :func:`snapshot_wait`, one forward run per arrival instant: requests
    arriving together (a job's candidate sizes) see the same queue, so their starts are read
    off one run of it without them (``pyss_adapter.core.start_profile``, equal answers)."""
    from pyss_adapter.core.start_profile import easy_profile

    out = np.empty(len(requests), dtype=np.float64)
    submit = np.asarray(requests.submit_s, dtype=np.float64)
    machine = int(snapshot.machine_procs)
    for s in np.unique(submit):
        ks = np.flatnonzero(submit == s)
        if ks.size == 1:
            out[ks[0]] = snapshot_wait(snapshot, requests, int(ks[0]))
            continue
        running, queued = queue_at(snapshot, float(s))
        starts = easy_profile(float(s), running, queued, machine)
        for k in ks:
            procs, est = request_row(requests, int(k), machine)
            out[k] = starts.start_s(procs, est) - float(s)
    return out


def queue_at(
    snapshot: Snapshot, s: float
) -> tuple[list[tuple[float, int]], list[tuple[int, float]]]:
    """The running jobs (expected end, processors) and the queue (processors, estimate), in
    arrival order, that a request arriving at ``s`` finds (see :func:`snapshot_wait`)."""
    run, wait = snapshot.running, snapshot.waiting
    t = float(snapshot.time_s)
    machine = int(snapshot.machine_procs)
    r_req = run.requests
    r_est = np.maximum(np.where(r_req.req_time_s > 0, r_req.req_time_s, t - run.start_s + 1.0), 1.0)
    r_procs = np.where(run.used_procs > 0, run.used_procs, r_req.procs)
    w_est = np.maximum(np.where(wait.requests.req_time_s > 0, wait.requests.req_time_s, 1.0), 1.0)
    submit = np.concatenate([r_req.submit_s, wait.requests.submit_s])
    start = np.concatenate([run.start_s, wait.requests.submit_s + FAR_S])
    est = np.concatenate([r_est, w_est])
    procs = np.clip(np.concatenate([r_procs, wait.requests.procs]), 1, machine).astype(np.int64)
    arrived = submit <= s
    is_running = arrived & (start < s) & (t + 1.0 > s)
    queued = np.flatnonzero(arrived & (start >= s))
    queued = queued[np.argsort(submit[queued], kind="stable")]
    rows = np.flatnonzero(is_running)
    return (
        list(zip((start[rows] + est[rows]).tolist(), procs[rows].tolist(), strict=True)),
        list(zip(procs[queued].tolist(), est[queued].tolist(), strict=True)),
    )


def request_row(requests: RequestBatch, k: int, machine: int) -> tuple[int, float]:
    """Request ``k``'s processors and estimate as the simulator takes them."""
    k_est = max(float(requests.req_time_s[k]) if requests.req_time_s[k] > 0 else 1.0, 1.0)
    return int(np.clip(requests.procs[k], 1, machine)), k_est


def snapshot_wait(snapshot: Snapshot, requests: RequestBatch, k: int) -> float:
    """Request ``k``'s simulated wait on ``snapshot``, in arrays: the same state as
    ``simulated_waits`` reads from :func:`snapshot_frame` plus the request's row (the frame
    is kept as the reference in tests/core/test_sim_wait_snapshot.py), without building it.

    At the request's arrival ``s``: running jobs started before ``s`` and ending after it
    (a running job ends at the snapshot's next second) keep running until start + estimate;
    every job submitted by ``s`` and not started before it is queued, in submit order
    (running jobs first at a tie, as in the frame), the request last.
    """
    from pyss_adapter.core.start_estimate import forward_easy

    s = float(requests.submit_s[k])
    machine = int(snapshot.machine_procs)
    running, queued = queue_at(snapshot, s)
    return forward_easy(s, running, [*queued, request_row(requests, k, machine)], len(queued),
                        machine)  # fmt: skip
