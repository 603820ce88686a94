"""Snapshots of a running replay hold what the simulated system knows, nothing else."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.state.from_engine import EngineSnapshots, snapshot_from_engine
from pyss_adapter.core.engine import Engine
from pyss_adapter.core.jobs import sim_jobs
from pyss_adapter.core.policy import SubmitDecision
from pyss_adapter.core.replay import replay_jobs
from tests.conftest import synthetic_log

MACHINE = 64


def _log():
    log = synthetic_log(300, seed=5)
    keep = (log["wait_time"] >= 0) & (log["run_time"] >= 0)
    return log[keep].reset_index(drop=True)


class Recorder:
    def __init__(self, log, decisions=None) -> None:
        self.log, self.decisions = log, decisions or {}
        self.snaps = {}

    def on_submit(self, engine: Engine, j: int, now: float) -> SubmitDecision | None:
        self.snaps[j] = snapshot_from_engine(engine, now, self.log)
        return self.decisions.get(j)


def test_history_holds_simulated_waits_and_runtimes_known_at_each_arrival() -> None:
    log = _log()
    jobs = sim_jobs(log, MACHINE, "default")
    rec = Recorder(log)
    result = replay_jobs(jobs, "easy", policy=rec)
    sim_wait = result.start_s - result.release_s
    assert (sim_wait != log["wait_time"].to_numpy()).mean() > 0.5  # not the log's schedule
    for j, snap in rec.snaps.items():
        now = snap.time_s
        hist = snap.history
        assert hist["job_id"].tolist() == jobs.job_id[:j].tolist()  # submitted so far
        started = result.start_s[:j] <= now
        ended = result.end_s[:j] <= now
        np.testing.assert_array_equal(hist["wait_time"], np.where(started, sim_wait[:j], -1.0))
        np.testing.assert_array_equal(hist["run_time"], np.where(ended, jobs.runtime_s[:j], -1.0))
        pos = np.searchsorted(jobs.job_id, snap.running.requests.job_id)
        assert (result.start_s[pos] <= now).all() and (result.end_s[pos] > now).all()
        np.testing.assert_array_equal(snap.running.start_s, result.start_s[pos])


def test_a_molded_job_shows_its_new_size_and_a_held_job_appears_at_its_release() -> None:
    log = _log()
    jobs = sim_jobs(log, MACHINE, "default")
    release = float(jobs.submit_s[20]) + 1.0
    decisions = {
        5: SubmitDecision(procs=3, estimate_s=999.0, runtime_s=50.0),
        7: SubmitDecision(release_at=release),
    }
    rec = Recorder(log, decisions)
    result = replay_jobs(jobs, "easy", policy=rec)
    later = rec.snaps[30]
    row = later.history.set_index("job_id").loc[jobs.job_id[5]]
    assert (row["requested_procs"], row["allocated_procs"], row["requested_time"]) == (3, 3, 999)
    before = rec.snaps[20]  # job 7 is held: not submitted yet
    assert jobs.job_id[7] not in before.history["job_id"].tolist()
    assert jobs.job_id[7] not in before.waiting.requests.job_id
    row7 = later.history.set_index("job_id").loc[jobs.job_id[7]]
    assert row7["submit_time"] == release
    if row7["wait_time"] >= 0:
        assert row7["wait_time"] == result.start_s[7] - release


def test_snapshots_need_a_policy_and_the_current_time() -> None:
    log = _log()
    jobs = sim_jobs(log, MACHINE, "default")
    with pytest.raises(ValueError, match="policy"):
        EngineSnapshots(Engine(jobs, replay_scheduler()), log)
    seen = []

    class Twice:
        def on_submit(self, engine: Engine, j: int, now: float) -> None:
            if j == 10:
                first = snapshot_from_engine(engine, now, log)
                seen.append(first is snapshot_from_engine(engine, now, log))
                with pytest.raises(ValueError, match="current time"):
                    snapshot_from_engine(engine, now - 1, log)

    replay_jobs(jobs, "easy", policy=Twice())
    assert seen == [True]


def replay_scheduler():
    from pyss_adapter.core.easy import EasyScheduler

    return EasyScheduler()
