"""One forward run answers every tentative request as ``forward_easy`` does, run by run."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyss_adapter.core.start_estimate import forward_easy
from pyss_adapter.core.start_profile import easy_profile


def random_state(rng: np.random.Generator, machine: int, n_run: int, n_queue: int, grid: bool):
    """Running (expected end, procs) and queue (procs, estimate); on ``grid`` every time is a
    multiple of 60 s, so ends tie and requests end exactly at shadows."""
    now = 1000.0
    draw = (lambda n: 60.0 * rng.integers(1, 30, n)) if grid else (lambda n: rng.uniform(1, 2e4, n))
    procs = rng.integers(1, machine // 2 + 1, n_run)
    keep = np.cumsum(procs) <= machine
    running = list(zip((now + draw(n_run))[keep].tolist(), procs[keep].tolist(), strict=True))
    queue = list(zip(rng.integers(1, machine + 1, n_queue).tolist(), draw(n_queue).tolist(),
                     strict=True))  # fmt: skip
    return now, running, queue


def slow(now, running, queue, machine, procs, est):
    return now + forward_easy(now, running, [*queue, (procs, est)], len(queue), machine)


@pytest.mark.parametrize("grid", [False, True])
def test_every_request_starts_when_its_own_forward_run_says(grid: bool) -> None:
    rng = np.random.default_rng(7 if grid else 3)
    machine, checked, later = 64, 0, 0
    for _ in range(60):
        now, running, queue = random_state(
            rng, machine, int(rng.integers(0, 12)), int(rng.integers(0, 15)), grid
        )
        prof = easy_profile(now, running, queue, machine)
        for procs in (1, 2, 7, 16, 33, 64):
            for est in (1.0, 60.0, 600.0, 3600.0, 7200.0, 86400.0):
                want = slow(now, running, queue, machine, procs, est)
                assert prof.start_s(procs, est) == want, (running, queue, procs, est)
                checked += 1
                later += want > now
    assert checked == 60 * 36 and later > checked // 4  # most wait: a real test


def test_a_profile_cut_at_a_time_answers_inf_past_it_and_the_same_before() -> None:
    rng = np.random.default_rng(11)
    machine = 32
    for _ in range(40):
        now, running, queue = random_state(rng, machine, 8, 10, True)
        cut = now + 1800.0
        prof = easy_profile(now, running, queue, machine, until_s=cut)
        for procs in (1, 4, 16, 32):
            for est in (60.0, 900.0, 7200.0):
                want = slow(now, running, queue, machine, procs, est)
                got = prof.start_s(procs, est)
                assert got == want if want <= cut else got in (want, math.inf)


def test_candidates_read_off_one_run_start_as_their_own_runs_say() -> None:
    """Limits as the scheduler's estimates, predicted runtimes as what jobs run (the live
    and replay decisions' forward run): each candidate's start equals its own run's."""
    import pandas as pd

    from jobmolding.core.future import forward_start_each, forward_start_last
    from predictor.core.state.request import JobRequest, RequestBatch
    from predictor.core.state.snapshot import ActiveJobs, Snapshot

    rng = np.random.default_rng(5)
    checked = later = 0
    for _ in range(50):
        machine, n_run, n_wait = 64, int(rng.integers(0, 10)), int(rng.integers(0, 14))
        sizes = rng.integers(1, 17, n_run)
        sizes = sizes[np.cumsum(sizes) <= machine]
        n_run = sizes.size

        def batch(n, lo, hi, submit):
            return RequestBatch.of([
                JobRequest(user=1, procs=int(p), req_time_s=float(r), submit_s=submit, job_id=i)
                for i, (p, r) in enumerate(zip(rng.integers(lo, hi, n),
                                               rng.choice([-1.0, 600.0, 3600.0, 7200.0], n),
                                               strict=True))
            ])  # fmt: skip

        running, waiting = batch(n_run, 1, 17, -100.0), batch(n_wait, 1, machine + 1, -10.0)
        snap = Snapshot(
            time_s=0.0, known_at_s=0.0,
            waiting=ActiveJobs(waiting, np.full(n_wait, np.inf), waiting.procs.copy()),
            running=ActiveJobs(running, np.full(n_run, -100.0), sizes.astype(np.int64)),
            history=pd.DataFrame(), machine_procs=machine,
        )  # fmt: skip
        ends = 60.0 * rng.integers(1, 100, n_run)
        runs = 60.0 * rng.integers(1, 100, n_wait)
        cands = batch(8, 1, machine + 1, 0.0)
        cand_run = 60.0 * rng.integers(1, 100, 8)
        got = forward_start_each(snap, ends, runs, cands, cand_run)
        for k in range(8):
            one = cands.take(np.array([k]))
            want = forward_start_last(snap, ends, runs, one, cand_run[k : k + 1])
            assert got[k] == want, (k, got[k], want)
            checked += 1
            later += want > 0
    assert checked == 400 and later > 100
