"""What ``squeue --start`` does: simulate the queue forward with EASY and requested times.

Wraps ``pyss_adapter.core.start_estimate.simulated_waits``; nothing to learn. For log rows the
running and queued jobs at each arrival come from the log (real starts); for requests in a
snapshot they are the snapshot's running jobs (start + requested time) and waiting jobs in
arrival order, the request queued last. Requests are simulated one by one: a candidate never
waits behind another candidate of the same batch.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

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
        snapshot = cast(Snapshot, targets.snapshot)  # rows is None: a snapshot's targets
        base = snapshot_frame(snapshot)
        out = np.zeros(len(targets))
        for k in range(len(targets)):
            one = ActiveJobs(targets.requests.take(np.array([k])), np.full(1, np.inf), np.ones(1))
            frame = pd.concat([base, _frame(one, np.full(1, FAR_S), np.ones(1))])
            order = np.argsort(frame["submit_time"].to_numpy(), kind="stable")
            row = int(np.flatnonzero(order == len(base))[0])
            sorted_frame = frame.iloc[order].reset_index(drop=True)
            out[k] = simulated_waits(sorted_frame, np.array([row]), snapshot.machine_procs)[0]
        return WaitPrediction(wait_s=np.maximum(out, 0.0))
