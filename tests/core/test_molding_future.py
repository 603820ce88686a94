"""The future snapshot of the delay decision (``jobmolding.core.future.advance``), hand-worked.

Machine of 10 processors at t = 0. Running: A (6 procs) predicted to end at 100, B (4) at 300.
Waiting, in order: C (8 procs, requested 1000 s, predicted 200 s), D (2 procs, requested 50 s,
predicted 50 s). EASY: at 100 A ends (6 free); C needs 8, so it is the head with a reservation
at 300 (B's end); D fits in the 6 free processors and its 50 s estimate ends before 300, so it
is backfilled at 100 and ends at 150. At 300 B ends and C starts, to end at 500.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobmolding.core.future import advance
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import ActiveJobs, Snapshot


def req(job: int, procs: int, limit: float) -> JobRequest:
    return JobRequest(user=1, procs=procs, req_time_s=limit, submit_s=0.0, job_id=job)


@pytest.fixture
def snap() -> Snapshot:
    running = RequestBatch.of([req(1, 6, 500), req(2, 4, 500)])
    waiting = RequestBatch.of([req(3, 8, 1000), req(4, 2, 50)])
    return Snapshot(
        time_s=0.0, known_at_s=0.0,
        waiting=ActiveJobs(waiting, np.full(2, np.inf), np.array([8, 2])),
        running=ActiveJobs(running, np.array([-50.0, -10.0]), np.array([6, 4])),
        history=pd.DataFrame(), machine_procs=10,
    )  # fmt: skip


ENDS, RUNS = np.array([100.0, 300.0]), np.array([200.0, 50.0])


def ids(jobs: ActiveJobs) -> list[int]:
    return jobs.requests.job_id.tolist()


def test_before_anything_ends_the_state_is_unchanged_but_its_time(snap) -> None:
    at = advance(snap, 50.0, ENDS, RUNS)
    assert at.time_s == 50.0 and at.known_at_s == 0.0
    assert ids(at.running) == [1, 2] and ids(at.waiting) == [3, 4]


def test_a_backfilled_job_runs_and_the_head_still_waits(snap) -> None:
    at = advance(snap, 120.0, ENDS, RUNS)
    assert ids(at.running) == [2, 4] and ids(at.waiting) == [3]
    np.testing.assert_array_equal(at.running.start_s, [-10.0, 100.0])
    assert at.free_procs == 4


def test_the_head_starts_when_its_reservation_comes(snap) -> None:
    at = advance(snap, 400.0, ENDS, RUNS)
    assert ids(at.running) == [3] and ids(at.waiting) == []
    np.testing.assert_array_equal(at.running.start_s, [300.0])


def test_the_requested_time_caps_a_predicted_runtime(snap) -> None:
    # D predicted to run 500 s but asked for 50: it ends at 150 all the same
    at = advance(snap, 200.0, ENDS, np.array([200.0, 500.0]))
    assert ids(at.running) == [2] and ids(at.waiting) == [3]


def test_no_queue_only_takes_the_ended_jobs_out(snap) -> None:
    empty = ActiveJobs(RequestBatch.of([]), np.zeros(0), np.zeros(0, np.int64))
    s = Snapshot(0.0, 0.0, empty, snap.running, pd.DataFrame(), 10)
    at = advance(s, 150.0, ENDS, np.zeros(0))
    assert ids(at.running) == [2] and at.time_s == 150.0


def test_a_time_before_the_snapshot_is_refused(snap) -> None:
    with pytest.raises(ValueError, match="before the snapshot"):
        advance(snap, -1.0, ENDS, RUNS)
