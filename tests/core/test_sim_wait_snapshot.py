"""The ``sim`` wait method on a snapshot, in arrays (``snapshot_wait``), against the frame it
used to build for ``simulated_waits`` (the reference: the snapshot's rows plus the request's,
sorted by submit time), on random snapshots with ties, overdue jobs and future arrivals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import ActiveJobs, Snapshot
from predictor.core.wait.sim import FAR_S, _frame, snapshot_frame, snapshot_wait
from pyss_adapter.core.start_estimate import simulated_waits


def reference(snapshot: Snapshot, requests: RequestBatch, k: int) -> float:
    base = snapshot_frame(snapshot)
    one = ActiveJobs(requests.take([k]), np.full(1, np.inf), np.ones(1))
    frame = pd.concat([base, _frame(one, np.full(1, FAR_S), np.ones(1))])
    order = np.argsort(frame["submit_time"].to_numpy(), kind="stable")
    row = int(np.flatnonzero(order == len(base))[0])
    sorted_frame = frame.iloc[order].reset_index(drop=True)
    return float(simulated_waits(sorted_frame, np.array([row]), snapshot.machine_procs)[0])


def random_snapshot(rng: np.random.Generator, machine: int = 32) -> Snapshot:
    t = 1000.0
    n_run, n_wait = int(rng.integers(0, 6)), int(rng.integers(0, 8))
    run_start = np.sort(rng.choice([t, t - 10, t - 500, t - 3000], n_run))
    run_req = RequestBatch.of([
        JobRequest(user=1, procs=int(rng.integers(1, 9)), submit_s=float(s - rng.integers(0, 50)),
                   req_time_s=float(rng.choice([-1.0, 60.0, 600.0, 4000.0])))
        for s in run_start
    ])  # fmt: skip
    wait_submit = np.sort(rng.choice([t - 200, t - 5, t], n_wait))
    wait_req = RequestBatch.of([
        JobRequest(user=2, procs=int(rng.integers(1, machine + 1)), submit_s=float(s),
                   req_time_s=float(rng.choice([-1.0, 100.0, 900.0])))
        for s in wait_submit
    ])  # fmt: skip
    return Snapshot(
        time_s=t, known_at_s=t,
        waiting=ActiveJobs(wait_req, np.full(n_wait, np.inf), wait_req.procs.copy()),
        running=ActiveJobs(run_req, run_start.astype(float), run_req.procs.copy()),
        history=pd.DataFrame(), machine_procs=machine,
    )  # fmt: skip


def test_snapshot_wait_equals_the_frame_simulation_on_random_snapshots() -> None:
    rng = np.random.default_rng(7)
    checked = nonzero = 0
    for _ in range(80):
        snap = random_snapshot(rng)
        requests = RequestBatch.of([
            JobRequest(user=3, procs=int(p), submit_s=float(s), req_time_s=float(r))
            for p, s, r in zip(rng.integers(1, 33, 3), rng.choice([1000.0, 1000.5, 1400.0], 3),
                               rng.choice([-1.0, 30.0, 700.0], 3), strict=True)
        ])  # fmt: skip
        for k in range(len(requests)):
            got = snapshot_wait(snap, requests, k)
            assert got == reference(snap, requests, k)
            nonzero += got > 0
            checked += 1
    assert checked == 240 and nonzero > 60


def test_requests_arriving_together_get_the_waits_of_their_own_runs() -> None:
    from predictor.core.wait.sim import snapshot_waits

    rng = np.random.default_rng(19)
    checked = nonzero = 0
    for _ in range(60):
        snap = random_snapshot(rng)
        at = float(rng.choice([1000.0, 1000.5, 1400.0]))
        requests = RequestBatch.of([  # one job's candidates (same arrival) and one apart
            *[JobRequest(user=3, procs=int(p), submit_s=at, req_time_s=float(r))
              for p, r in zip(rng.integers(1, 33, 6), rng.choice([-1.0, 30.0, 700.0, 3600.0], 6),
                              strict=True)],
            JobRequest(user=4, procs=8, submit_s=1200.0, req_time_s=600.0),
        ])  # fmt: skip
        got = snapshot_waits(snap, requests)
        for k in range(len(requests)):
            assert got[k] == snapshot_wait(snap, requests, k)
            nonzero += got[k] > 0
            checked += 1
    assert checked == 420 and nonzero > 100
