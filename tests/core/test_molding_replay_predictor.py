"""The replay's own predictor: the queue projection worked by hand, the simulated load and
runtime history, and the rule that a decision reads only what the simulation knows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobmolding.core.evaluate import evaluate, prepare
from jobmolding.core.policy import MoldingParams
from jobmolding.core.replay_predictor import SimStatePredictor
from jobmolding.core.sim_runtime import SimulatedRuntimes, SimulatedUsage
from jobmolding.core.sim_wait import earliest_fit, occupy, profile, projected_waits
from traces.core.swf import SWF_FIELDS


def test_profile_frees_processors_at_the_running_jobs_ends() -> None:
    t, f = profile(0.0, 10, np.array([100.0, 100.0, 200.0]), np.array([3, 2, 4]))
    assert t.tolist() == [0, 100, 200] and f.tolist() == [1, 6, 10]
    # a job ending at the projection's start is already gone
    t, f = profile(50.0, 10, np.array([50.0, 80.0]), np.array([5, 5]))
    assert t.tolist() == [50, 80] and f.tolist() == [5, 10]


def test_earliest_fit_needs_the_processors_for_the_whole_estimate() -> None:
    t, f = profile(0.0, 10, np.array([100.0, 100.0, 200.0]), np.array([3, 2, 4]))
    assert earliest_fit(t, f, 1, 1000.0) == 0.0
    assert earliest_fit(t, f, 5, 50.0) == 100.0
    assert earliest_fit(t, f, 8, 10.0) == 200.0
    t2, f2 = occupy(t, f, 100.0, 50.0, 5)
    assert t2.tolist() == [0, 100, 150, 200] and f2.tolist() == [1, 1, 6, 10]


def test_candidates_are_planned_behind_the_queue() -> None:
    # free: 1 until 100, 6 until 200, then 10. Queue: A (5 procs, 50 s) goes at 100 and
    # leaves 1 free until 150; B (6, 100 s) fits from 150 (6 free, then 10). Candidates:
    # (1, 10 s) fits now; (4, 60 s) first has 4 free for 60 s at 200; (10, 5 s) at 250.
    waits = projected_waits(
        0.0, 10, np.array([100.0, 100.0, 200.0]), np.array([3, 2, 4]),
        np.array([5, 6]), np.array([50.0, 100.0]),
        np.array([1, 4, 10]), np.array([10.0, 60.0, 5.0]),
    )  # fmt: skip
    assert waits.tolist() == [0.0, 200.0, 250.0]


def test_simulated_usage_integrates_busy_processors() -> None:
    u = SimulatedUsage(10, 0.0)
    u.event(0.0, 4)
    u.event(10.0, 2)
    u.event(20.0, -4)
    assert u.cpu_until(np.array([10.0, 20.0, 30.0])).tolist() == [40.0, 100.0, 120.0]
    assert u.mean_load(0.0, 20.0) == pytest.approx(0.5)
    assert u.predicted_load(20.0, window_s=10.0) == pytest.approx(0.6)


def test_runtime_rangesets_fall_back_by_level_and_are_reused_until_history_grows() -> None:
    r = SimulatedRuntimes()
    none = r.rangeset(1, 4, 0, 0, 500.0, 0.5)
    assert none.level == "none" and none.low_s.tolist() == [1.0] and none.high_s.tolist() == [500]
    r.finished(1, 4, 0, 0, 100.0, 0.5)
    assert r.rangeset(1, 4, 0, 0, 500.0, 0.5).level == "tuple"
    assert r.rangeset(1, 8, 0, 0, 500.0, 0.5).level == "user"
    assert r.rangeset(2, 4, 0, 0, 500.0, 0.5).level == "size"
    assert r.rangeset(2, 8, 0, 0, 500.0, 0.5).level == "all"
    first = r.rangeset(1, 4, 0, 0, 500.0, 0.501)
    assert r.rangeset(1, 4, 0, 0, 500.0, 0.499) is first  # same load step, same history
    r.finished(1, 4, 0, 0, 300.0, 0.5)
    again = r.rangeset(1, 4, 0, 0, 500.0, 0.5)
    assert again is not first and again.high_s.max() > first.high_s.max()


def random_log(n: int, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = pd.DataFrame(-1, index=range(n), columns=list(SWF_FIELDS), dtype=np.int64)
    procs = rng.choice([1, 2, 4, 8, 16, 32], size=n)
    run = rng.integers(10, 1000, size=n)
    out["job_id"] = np.arange(1, n + 1)
    out["submit_time"] = np.cumsum(rng.integers(0, 600, size=n))
    out["wait_time"] = rng.integers(0, 100, size=n)
    out["run_time"] = run
    out["allocated_procs"] = out["requested_procs"] = procs
    out["requested_time"] = run * rng.integers(1, 4, size=n)
    out["user_id"] = rng.integers(1, 6, size=n)
    out["group_id"] = out["queue_id"] = 1
    return out


def run(frame, strategy: str = "delay", n_warmup: int = 90):
    setup = prepare(frame, 32, tune_fraction=n_warmup / len(frame))

    def make(s):
        return SimStatePredictor(s.requests, s.jobs.machine_procs, float(s.jobs.submit_s[0]))

    return evaluate(setup, [strategy], MoldingParams(), make)[strategy].outcome


def test_decisions_read_nothing_that_arrives_later_nor_the_logs_waits() -> None:
    full = random_log(300)
    a = run(full)
    assert (a.procs != a.original_procs).any() and (a.release_s > a.arrival_s).any()
    # cut after job 200: jobs 0..199 were decided on the same knowledge
    cut = run(full.iloc[:200])
    assert np.array_equal(a.procs[:200], cut.procs[:200])
    assert np.array_equal(a.release_s[:200], cut.release_s[:200])
    # the log's waits are never read
    other = run(full.assign(wait_time=full["wait_time"] * 7 + 1))
    assert np.array_equal(a.procs, other.procs) and np.array_equal(a.start_s, other.start_s)
