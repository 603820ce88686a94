"""Why a request waits and what single change starts it sooner, on hand-built queues.

Each case's answer is derived by hand from EASY's rules (pyss_adapter/core/easy.py): the head
starts when it fits; a blocked head is reserved at the shadow time; a later job backfills if
it fits now and ends by the shadow or fits the extra processors.
"""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.why.explain import explain
from predictor.core.why.queue import QueueState, estimates
from predictor.core.why.sooner import held_after, min_saving_s, sooner


def state(running: list[tuple[float, int]], queued: list[tuple[int, float]], mp: int = 100):
    """``running``: (expected end, procs); ``queued``: (procs, estimate), arrival order."""
    return QueueState(
        now_s=0.0,
        machine_procs=mp,
        running_end_s=np.array([e for e, _ in running], float),
        running_procs=np.array([p for _, p in running], np.int64),
        queue_procs=np.array([p for p, _ in queued], np.int64),
        queue_estimate_s=np.array([e for _, e in queued], float),
    )


def test_request_behind_a_blocked_head_waits_for_the_jobs_ahead_and_fewer_procs_help():
    # 80 run until 1 h (20 free). Head: 50 for 2 h, starts at 1 h, ends at 3 h. The request
    # (64 for 1 h) cannot join the head at 1 h (50 free) so it starts at 3 h; alone it
    # would start at 1 h. At 1 h 50 processors are free: 50 instead of 64 starts 2 h sooner.
    s = state([(3600, 80)], [(50, 7200)])
    why = explain(s, 64, 3600)
    assert (why.reason, why.start_s, why.alone_start_s) == ("jobs_ahead", 10800, 3600)
    assert why.ahead.queued_start_s.tolist() == [3600]
    assert why.ahead.queued_end_s.tolist() == [10800]
    assert why.ahead.running_procs.tolist() == [80]
    change = sooner(s, why, 3600)
    assert (change.fewer_procs.procs, change.fewer_procs.start_s) == (50, 3600)
    assert change.fewer_procs.saved_s == 7200
    assert change.shorter_limit is None  # 64 > 20 free: no limit starts it now
    assert change.later_submission.delay_s == 10800
    assert change.best is change.fewer_procs


def test_a_limit_that_ends_before_the_heads_reservation_backfills_now():
    # 60 run until 1 h 20 min (40 free); the head needs 80 (shadow 1 h 20 min, extra 20).
    # The request, 30 for 3 h, fits the 40 free processors but not the extra 20 and ends
    # after the shadow: it waits until the head ends (1 h 20 min + 1 h). With a limit of at
    # most 1 h 20 min it ends by the shadow and backfills now.
    s = state([(4800, 60)], [(80, 3600)])
    why = explain(s, 30, 10800)
    assert (why.reason, why.start_s, why.alone_start_s) == ("jobs_ahead", 8400, 0)
    change = sooner(s, why, 10800)
    assert change.shorter_limit.limit_s == 4800
    assert (change.shorter_limit.start_s, change.shorter_limit.saved_s) == (0, 8400)
    # 20 processors fit the extra: the largest smaller size that starts now too.
    assert (change.fewer_procs.procs, change.fewer_procs.start_s) == (20, 0)


def test_limit_is_floored_to_whole_minutes_so_it_still_fits():
    s = state([(4830, 60)], [(80, 3600)])
    why = explain(s, 30, 10800)
    assert sooner(s, why, 10800).shorter_limit.limit_s == 4800


def test_empty_queue_waits_for_processors_and_the_free_ones_start_it_now():
    # 90 run until 1 h: 50 processors are there at 1 h; the 10 free ones start it at once.
    s = state([(3600, 90)], [])
    why = explain(s, 50, 3600)
    assert (why.reason, why.start_s) == ("processors", 3600)
    change = sooner(s, why, 3600)
    assert (change.fewer_procs.procs, change.fewer_procs.start_s) == (10, 0)
    assert change.shorter_limit is None


def test_a_request_that_fits_starts_now_and_needs_no_change():
    s = state([(3600, 10)], [])
    why = explain(s, 50, 3600)
    assert (why.reason, why.wait_s) == ("nothing", 0)
    change = sooner(s, why, 3600)
    assert change.best is None and change.later_submission is None


def test_a_held_request_waits_for_its_hold():
    s = state([(3600, 10)], [])
    assert explain(s, 50, 3600, held_until_s=600).reason == "hold"


def test_a_saving_under_the_threshold_is_not_a_change():
    # 64 start at 10 h behind the head; with 63 the same: nothing smaller helps by 1 h.
    s = state([(36000, 100)], [])
    why = explain(s, 64, 3600)
    assert why.reason == "processors"
    assert sooner(s, why, 3600).fewer_procs is None
    assert min_saving_s(36000) == 3600 and min_saving_s(10) == 60


def test_running_job_past_its_estimate_is_expected_to_end_in_a_second():
    s = state([(-50, 100)], [])
    why = explain(s, 10, 60)
    assert why.start_s == 1.0
    assert why.ahead.running_end_s.tolist() == [1.0]


@pytest.mark.parametrize("req, fallback, expected", [(3600, 10, 3600), (0, 700, 700), (-1, 0, 1)])
def test_estimate_is_the_request_else_the_fallback(req, fallback, expected):
    assert estimates(np.array([req]), np.array([fallback])).tolist() == [expected]


def test_an_empty_machine_starts_a_full_size_request_at_once():
    why = explain(state([], []), 100, 60)
    assert (why.reason, why.start_s) == ("nothing", 0)
    assert sooner(state([], []), why, 60).best is None


def test_a_full_size_head_that_fits_starts_first_and_no_smaller_size_helps():
    # The head (100 for 10 min) starts at once and takes the whole machine.
    s = state([], [(100, 600)])
    why = explain(s, 100, 60)
    assert (why.reason, why.start_s, why.alone_start_s) == ("jobs_ahead", 600, 0)
    assert sooner(s, why, 60).best is None


def test_forward_runs_kept_per_queue_give_the_same_changes_as_fresh_runs():
    """``Profiles``: requests at one instant share the queue's forward run; the answers equal
    fresh runs, whichever request came first (a shorter kept run is replaced by a longer)."""
    from predictor.core.why.forward import Profiles

    rng = np.random.default_rng(3)
    profiles = Profiles(size=4)
    compared = 0
    for _ in range(40):
        running = [(float(rng.integers(1, 5000)), int(rng.integers(1, 40))) for _ in range(6)]
        queued = [(int(rng.integers(1, 100)), float(rng.integers(60, 9000))) for _ in range(8)]
        s = state(running, queued)
        for _ in range(6):  # several requests on the same queue, in random order
            procs, est = int(rng.integers(1, 101)), float(rng.integers(30, 20000))
            why = explain(s, procs, est)
            assert sooner(s, why, est, profiles) == sooner(s, why, est)
            compared += why.start_s > s.now_s
    assert compared > 100 and len(profiles.runs) == 4  # bounded


def test_kept_forward_runs_are_bounded_in_bytes_too():
    """A long queue makes a large run: the kept runs stay under ``max_bytes`` (the newest
    is always kept), and the byte count matches what is held."""
    from predictor.core.why.forward import Profiles

    rng = np.random.default_rng(5)
    profiles = Profiles(size=1000, max_bytes=20_000)
    for k in range(30):
        queued = [(int(rng.integers(1, 100)), float(rng.integers(60, 9000))) for _ in range(40)]
        profiles.get(state([(100.0 + k, 50)], queued))
        held = sum(profiles.runs.sizes())
        assert held == profiles.runs.bytes
        assert held <= 20_000 or len(profiles.runs) == 1
    assert 1 < len(profiles.runs) < 30


def test_a_plan_read_off_the_kept_run_equals_the_queue_run_again_bit_for_bit():
    """``forward.plan`` with kept runs: when the request starts after every job ahead, the
    queue's own run gives the plan; otherwise the queue is run again with it. Both must be
    the engine's numbers exactly, at clocks from 0 to 10^9 s with fractional ends (the kept
    run and the plan set the running jobs' ends up in two ways), and both paths are taken."""
    from predictor.core.why import forward
    from predictor.core.why.forward import Profiles, plan

    rng = np.random.default_rng(11)
    profiles = Profiles(size=8)
    read_off = rerun = 0
    for case in range(300):
        now = float(rng.choice([0.0, 17.25, 3.7e5, 9.87654321e8])) + float(rng.uniform(0, 1))
        n_run, n_queue = int(rng.integers(0, 7)), int(rng.integers(0, 9))
        s = QueueState(
            now_s=now,
            machine_procs=100,
            running_end_s=now + rng.uniform(-50.0, 9000.0, n_run),  # some past their end
            running_procs=rng.integers(1, 40, n_run).astype(np.int64),
            queue_procs=rng.integers(1, 101, n_queue).astype(np.int64),
            queue_estimate_s=rng.uniform(0.2, 9000.0, n_queue),
        )
        for _ in range(3):  # requests sharing the queue's kept run
            procs, est = int(rng.integers(1, 120)), float(rng.uniform(0.0, 20000.0))
            fresh = forward._engine_plan(s, min(procs, 100), max(est, 1.0))
            kept = plan(s, procs, est, profiles)
            assert kept.start_s == fresh.start_s, case
            assert kept.queue_start_s.tobytes() == fresh.queue_start_s.tobytes(), case
            plain = plan(s, procs, est)  # no kept runs: the engine's run
            assert plain.start_s == fresh.start_s
            assert plain.queue_start_s.tobytes() == fresh.queue_start_s.tobytes()
            queued = s.queue_procs.size
            ahead = profiles.get(s).queue_start_s
            if queued and kept.start_s >= ahead.max():
                read_off += 1
            elif queued:
                rerun += 1
    assert read_off > 50 and rerun > 50


def test_explanations_with_kept_runs_equal_those_without():
    """``explain(..., profiles=...)``: the plan and the start with nobody ahead come from
    kept runs, and every field equals a fresh explanation's."""
    from predictor.core.why.forward import Profiles

    rng = np.random.default_rng(13)
    profiles = Profiles(size=16)
    for _ in range(150):
        now = float(rng.choice([0.0, 5.5e4, 9.1e8])) + float(rng.uniform(0, 1))
        n_run, n_queue = int(rng.integers(0, 6)), int(rng.integers(0, 7))
        s = QueueState(
            now_s=now,
            machine_procs=64,
            running_end_s=now + rng.uniform(-20.0, 7000.0, n_run),
            running_procs=rng.integers(1, 30, n_run).astype(np.int64),
            queue_procs=rng.integers(1, 65, n_queue).astype(np.int64),
            queue_estimate_s=rng.uniform(0.5, 7000.0, n_queue),
        )
        for _ in range(2):
            procs, est = int(rng.integers(1, 80)), float(rng.uniform(0.0, 9000.0))
            a, b = explain(s, procs, est), explain(s, procs, est, profiles=profiles)
            assert (a.reason, a.start_s, a.alone_start_s) == (b.reason, b.start_s, b.alone_start_s)
            assert a.ahead.queued_start_s.tobytes() == b.ahead.queued_start_s.tobytes()
            assert a.ahead.queued_end_s.tobytes() == b.ahead.queued_end_s.tobytes()


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_processors_held_after_each_step_equal_the_mask_sums(dtype):
    """``held_after`` (a sort and a bisection) gives the (times x jobs) mask's sums exactly,
    ties, empty sets and a queued job ending before its start included."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        r, q, t = rng.integers(0, 25, 3)
        times = np.unique(rng.integers(0, 60, t).astype(float))
        ends, procs = rng.integers(0, 50, r).astype(float), rng.integers(1, 500, r).astype(dtype)
        running = (ends[None, :] > times[:, None]) @ procs
        got = held_after(ends, procs, times)
        assert got.dtype == running.dtype
        np.testing.assert_array_equal(got, running)
        start = rng.integers(0, 50, q).astype(float)
        end, qp = start + rng.integers(-5, 30, q), rng.integers(1, 300, q).astype(dtype)
        active = ((start[None, :] <= times[:, None]) & (end[None, :] > times[:, None])) @ qp
        queued = held_after(np.maximum(end, start), qp, times) - held_after(start, qp, times)
        np.testing.assert_array_equal(queued, active)
