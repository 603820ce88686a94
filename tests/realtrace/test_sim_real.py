"""The simulator on the shared PWA traces: PySS's reference figures and invariants."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from pyss_adapter.core.conservative import ConservativeScheduler
from pyss_adapter.core.easy import EasyScheduler
from pyss_adapter.core.engine import Engine
from pyss_adapter.core.jobs import sim_jobs
from pyss_adapter.core.policy import SubmitDecision
from pyss_adapter.core.replay import replay_jobs
from pyss_adapter.core.start_estimate import simulated_waits
from pyss_adapter.core.stats import all_jobs_view, pyss_selection
from traces.core.swf import SwfTrace, read_swf

pytestmark = pytest.mark.realtrace

# spec simulator.md: PySS 2007, EASY, N = MaxProcs, all jobs.
REFERENCE = {
    "KTH-SP2-1996-2.1-cln.swf.gz": (100, 6899, 92.87, 0.699),
    "SDSC-SP2-1998-4.2-cln.swf.gz": (128, 18942, 106.96, 0.825),
    "CTC-SP2-1996-3.1-cln.swf.gz": (338, 13757, 48.07, 0.836),
    "HPC2N-2002-2.2-cln.swf.gz": (240, 11070, 87.87, 0.598),
}
ALL_TRACES = [*REFERENCE, "lublin_256.swf.gz", "lublin-aaroh.swf.gz"]


@cache
def _trace(folder: Path, name: str) -> SwfTrace:
    return read_swf(folder / name)


def _path(shared_traces: Path, name: str) -> Path:
    if not (shared_traces / name).is_file():
        pytest.skip(f"{name} is not in {shared_traces}")
    return shared_traces


@pytest.mark.parametrize("name", list(REFERENCE))
def test_pyss_mode_reproduces_the_pyss_reference_figures(shared_traces: Path, name: str) -> None:
    procs, wait_s, bsld, util = REFERENCE[name]
    trace = _trace(_path(shared_traces, name), name)
    view = all_jobs_view(replay_jobs(sim_jobs(trace.jobs, procs, "pyss"), "easy"))
    assert round(view["mean_wait_s"]) == wait_s
    assert round(view["mean_bounded_slowdown"], 2) == bsld
    assert round(view["utilisation"], 3) == util


def _max_procs_in_use(result) -> int:
    times = np.concatenate([result.end_s, result.start_s])
    delta = np.concatenate([-result.n_procs, result.n_procs])
    order = np.lexsort((delta, times))  # at equal times, ends (negative) first
    return int(np.cumsum(delta[order]).max())


@pytest.mark.parametrize("mode", ["pyss", "default"])
@pytest.mark.parametrize("name", ALL_TRACES)
def test_easy_invariants_hold_on_the_whole_trace(shared_traces: Path, name: str, mode: str) -> None:
    trace = _trace(_path(shared_traces, name), name)
    jobs = sim_jobs(trace.jobs, trace.machine_procs, mode)
    result = replay_jobs(jobs, "easy")
    assert _max_procs_in_use(result) <= jobs.machine_procs
    assert (result.start_s >= jobs.submit_s).all()
    assert np.isfinite(result.start_s).all()
    if mode == "pyss":  # estimates bound the runtimes: the head is never late
        reserved = ~np.isnan(result.reservation_s)
        # (the Lublin files have no requested times: PySS runs every job for 1 s)
        assert reserved.any() or name not in REFERENCE
        assert (result.start_s[reserved] <= result.reservation_s[reserved]).all()


@pytest.mark.parametrize("name", ALL_TRACES)
def test_fcfs_starts_jobs_in_arrival_order(shared_traces: Path, name: str) -> None:
    trace = _trace(_path(shared_traces, name), name)
    result = replay_jobs(sim_jobs(trace.jobs, trace.machine_procs, "pyss"), "fcfs")
    assert (np.diff(result.start_s) >= 0).all()
    assert _max_procs_in_use(result) <= trace.machine_procs


def test_conservative_submission_shortcut_gives_the_same_schedule(shared_traces: Path) -> None:
    name = "KTH-SP2-1996-2.1-cln.swf.gz"
    trace = _trace(_path(shared_traces, name), name)

    class FullPasses(ConservativeScheduler):
        schedule_new = None

    for mode in ("pyss", "default"):
        jobs = sim_jobs(trace.jobs.iloc[:8000], 100, mode)
        fast = Engine(jobs, ConservativeScheduler()).run()
        full = Engine(jobs, FullPasses()).run()
        assert np.array_equal(fast.start_s, full.start_s)


def test_conservative_respects_the_machine_on_a_slice(shared_traces: Path) -> None:
    name = "KTH-SP2-1996-2.1-cln.swf.gz"
    trace = _trace(_path(shared_traces, name), name)
    jobs = sim_jobs(trace.jobs.iloc[:3000], 100, "pyss")
    result = replay_jobs(jobs, "conservative")
    assert _max_procs_in_use(result) <= 100
    assert (result.start_s >= jobs.submit_s).all()


@pytest.mark.parametrize("name", ["KTH-SP2-1996-2.1-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz"])
def test_pyss_submission_guard_changes_no_start_time(shared_traces: Path, name: str) -> None:
    trace = _trace(_path(shared_traces, name), name)
    jobs = sim_jobs(trace.jobs, REFERENCE[name][0], "pyss")
    plain = Engine(jobs, EasyScheduler()).run()
    guarded = Engine(jobs, EasyScheduler(), submit_guard=True).run()
    assert np.array_equal(plain.start_s, guarded.start_s)


def test_full_passes_give_the_same_schedule_as_the_submission_shortcut(shared_traces: Path) -> None:
    name = "SDSC-SP2-1998-4.2-cln.swf.gz"
    trace = _trace(_path(shared_traces, name), name)

    class FullPasses(EasyScheduler):
        schedule_new = None

    for mode in ("pyss", "default"):
        jobs = sim_jobs(trace.jobs, 128, mode)
        fast = Engine(jobs, EasyScheduler()).run()
        full = Engine(jobs, FullPasses()).run()
        assert np.array_equal(fast.start_s, full.start_s)


def test_pyss_view_counts_most_jobs_of_kth(shared_traces: Path) -> None:
    name = "KTH-SP2-1996-2.1-cln.swf.gz"
    trace = _trace(_path(shared_traces, name), name)
    result = replay_jobs(sim_jobs(trace.jobs, 100, "pyss"), "easy")
    chosen = pyss_selection(result)
    assert 0.95 * len(result.jobs) < len(chosen) < len(result.jobs)
    assert len(np.unique(chosen)) == len(chosen)


def test_simulated_waits_on_a_slice_are_finite_and_not_negative(shared_traces: Path) -> None:
    name = "SDSC-SP2-1998-4.2-cln.swf.gz"
    trace = _trace(_path(shared_traces, name), name)
    jobs = trace.jobs.iloc[:3000].reset_index(drop=True)
    waits = simulated_waits(jobs, np.arange(500, 3000, 5), 128)
    assert np.isfinite(waits).all()
    assert (waits >= 0).all()
    assert (waits > 0).mean() > 0.1


@pytest.mark.parametrize("size", [700, 1500, 2300, 3000])
def test_simulated_wait_of_the_last_arrival_is_its_easy_replay_wait(
    shared_traces: Path, size: int
) -> None:
    """With runtimes equal to requests and the replay's own starts as the known past,
    the forward simulation of the slice's last job (no later arrival to disturb it)
    must give exactly its wait in the full EASY replay: the same engine both ways."""
    name = "SDSC-SP2-1998-4.2-cln.swf.gz"
    trace = _trace(_path(shared_traces, name), name)
    jobs = trace.jobs.iloc[:size]
    jobs = jobs[(jobs["run_time"] >= 0) & (jobs["allocated_procs"] > 0)].reset_index(drop=True)
    req = jobs["requested_time"].to_numpy(dtype=float)
    run = jobs["run_time"].to_numpy(dtype=float)
    jobs = jobs.assign(run_time=np.maximum(np.where(req > 0, req, run), 1.0))
    result = replay_jobs(sim_jobs(jobs, 128, "default"), "easy")
    last = len(jobs) - 1
    got = simulated_waits(jobs, np.array([last]), 128, actual_starts=result.start_s)
    assert got[0] == result.wait_s[last]


class _Listener:
    """Decides nothing; counts what the engine tells it."""

    def __init__(self) -> None:
        self.counts = {"submit": 0, "start": 0, "finish": 0}

    def on_submit(self, engine: Engine, j: int, now: float) -> None:
        self.counts["submit"] += 1

    def on_start(self, engine: Engine, j: int, now: float) -> None:
        self.counts["start"] += 1

    def on_finish(self, engine: Engine, j: int, now: float) -> None:
        self.counts["finish"] += 1


@pytest.mark.parametrize("scheduler", ["easy", "fcfs"])
@pytest.mark.parametrize("mode", ["pyss", "default"])
def test_a_policy_that_decides_nothing_gives_the_same_schedule(
    shared_traces: Path, mode: str, scheduler: str
) -> None:
    name = "SDSC-SP2-1998-4.2-cln.swf.gz"
    trace = _trace(_path(shared_traces, name), name)
    jobs = sim_jobs(trace.jobs, 128, mode)
    listener = _Listener()
    plain = replay_jobs(jobs, scheduler)
    hooked = replay_jobs(jobs, scheduler, policy=listener)
    assert np.array_equal(plain.start_s, hooked.start_s)
    assert np.array_equal(plain.finish_order, hooked.finish_order)
    assert listener.counts == {"submit": len(jobs), "start": len(jobs), "finish": len(jobs)}


class _HalveAndHold:
    """Molds every job wider than 8 to half its size (twice the runtime) and holds
    every 10th job for an hour: enough churn to check the invariants."""

    def on_submit(self, engine: Engine, j: int, now: float) -> SubmitDecision | None:
        p = engine.procs[j]
        release = now + 3600 if j % 10 == 0 else None
        if p > 8:
            return SubmitDecision(
                procs=p // 2,
                estimate_s=2 * engine.requested[j],
                runtime_s=2 * engine.runtime[j],
                release_at=release,
            )
        return None if release is None else SubmitDecision(release_at=release)


def test_molded_and_held_jobs_respect_the_machine_and_their_release(shared_traces: Path) -> None:
    name = "KTH-SP2-1996-2.1-cln.swf.gz"
    trace = _trace(_path(shared_traces, name), name)
    jobs = sim_jobs(trace.jobs, 100, "pyss")
    result = replay_jobs(jobs, "easy", policy=_HalveAndHold())
    wide = jobs.n_procs > 8
    assert np.array_equal(result.n_procs[wide], jobs.n_procs[wide] // 2)
    assert np.array_equal(result.end_s - result.start_s, result.runtime_s)
    assert np.array_equal(result.runtime_s[wide], 2 * jobs.runtime_s[wide])
    assert _max_procs_in_use(result) <= 100
    assert (result.start_s >= result.release_s).all()
    held = np.arange(len(jobs)) % 10 == 0
    assert np.array_equal(result.delay_s[held], np.full(held.sum(), 3600.0))
    assert (result.wait_s[held] >= 3600).all()
