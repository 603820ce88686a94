"""Golden schedules worked out by hand (docs/simulator.md, "Golden traces"), diffed exactly."""

from __future__ import annotations

import io

import numpy as np
import pytest

from pyss_adapter.core.easy import EasyScheduler
from pyss_adapter.core.engine import Engine, IllegalTransition
from pyss_adapter.core.jobs import sim_jobs, sim_jobs_from_arrays
from pyss_adapter.core.replay import replay, replay_jobs
from traces.core.swf import read_swf


def _jobs(rows: list[tuple[float, float, float, int]], procs: int):
    """rows: (submit, runtime, estimate, processors)."""
    submit, run, est, n = (np.array(c) for c in zip(*rows, strict=True))
    return sim_jobs_from_arrays(submit, run, est, n, procs)


# A holds 6 of 10 processors until 100; B (8) is the blocked head, shadow 100, extra 2.
BACKFILL = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 50, 50, 3), (3, 200, 200, 1)]


def test_easy_backfills_a_short_job_and_a_narrow_long_job() -> None:
    # C ends at 52 <= shadow 100; D ends after the shadow but uses 1 <= extra 2.
    result = replay_jobs(_jobs(BACKFILL, 10), "easy")
    assert result.start_s.tolist() == [0, 100, 2, 3]


def test_easy_reserves_the_head_at_the_shadow_time() -> None:
    result = replay_jobs(_jobs(BACKFILL, 10), "easy")
    assert result.reservation_s[1] == 100
    assert np.isnan(result.reservation_s[[0, 2, 3]]).all()


def test_fcfs_never_backfills() -> None:
    # C (3) does not fit beside B after 100, and blocks D: both start when B ends.
    result = replay_jobs(_jobs(BACKFILL, 10), "fcfs")
    assert result.start_s.tolist() == [0, 100, 150, 150]


def test_conservative_matches_easy_when_no_reservation_is_at_stake() -> None:
    result = replay_jobs(_jobs(BACKFILL, 10), "conservative")
    assert result.start_s.tolist() == [0, 100, 2, 3]


def test_easy_does_not_backfill_a_job_that_would_delay_the_head() -> None:
    # C fits now (3 <= 4 free) but ends at 202 > shadow 100 and needs 3 > extra 2.
    rows = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 200, 200, 3)]
    result = replay_jobs(_jobs(rows, 10), "easy")
    assert result.start_s.tolist() == [0, 100, 150]


def test_a_job_ending_at_its_estimate_is_free_for_submissions_at_that_time() -> None:
    # A ends at 10 = its estimated end: the pass for B's submission at 10 sees 4 free.
    result = replay_jobs(_jobs([(0, 10, 10, 4), (10, 5, 5, 4)], 4), "easy")
    assert result.start_s.tolist() == [0, 10]


def test_submissions_at_a_time_are_handled_before_terminations_at_that_time() -> None:
    # At 10: A (2, ends at its estimate) is free, D (2, estimate 20) still counts busy.
    # C (4) is the blocked head with shadow 20; B (2, ends 15 <= 20) backfills at its
    # submission, before D's termination is handled; C then waits for B.
    rows = [(0, 10, 10, 2), (0, 10, 20, 2), (10, 5, 5, 4), (10, 5, 5, 2)]
    result = replay_jobs(_jobs(rows, 4), "easy")
    assert result.start_s.tolist() == [0, 0, 15, 10]


def test_equal_submit_times_keep_input_order_and_replays_repeat_exactly() -> None:
    rows = [(5, 10, 10, 3), (5, 10, 10, 3), (5, 10, 10, 3), (5, 1, 1, 1)]
    first = replay_jobs(_jobs(rows, 4), "easy")
    again = replay_jobs(_jobs(rows, 4), "easy")
    assert first.start_s.tolist() == [5, 15, 25, 5]
    assert np.array_equal(first.start_s, again.start_s)
    assert np.array_equal(first.finish_order, again.finish_order)


def test_a_job_running_longer_than_its_estimate_keeps_its_processors() -> None:
    # A asked for 10 s and runs 100 s: B waits for A's real end; C (free 0) for B.
    rows = [(0, 100, 10, 4), (1, 10, 10, 4), (20, 5, 5, 1)]
    result = replay_jobs(_jobs(rows, 4), "easy")
    assert result.start_s.tolist() == [0, 100, 110]


SWF_OVERRUN = """; MaxProcs: 4
1 0 -1 100 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1
3 20 -1 5 1 -1 -1 1 5 -1 1 1 1 -1 -1 -1 -1 -1
"""


def _swf(text: str):
    return read_swf(io.BytesIO(text.encode()), name="golden.swf")


def test_pyss_mode_cuts_an_overrunning_job_to_its_request() -> None:
    # PySS: estimate max(10, 100) = 100, runtime min(10, 100) = 10; B ends at its
    # estimate (20), so C's submission pass at 20 finds the machine free.
    jobs = _swf(SWF_OVERRUN).jobs
    assert replay(jobs, 4, mode="pyss").start_s.tolist() == [0, 10, 20]
    assert replay(jobs, 4, mode="default").start_s.tolist() == [0, 100, 110]


SWF_MISSING = """; MaxProcs: 4
1 0 -1 -1 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1
2 5 -1 50 -1 -1 -1 3 -1 -1 1 1 1 -1 -1 -1 -1 -1
3 10 -1 30 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1
"""


def test_pyss_mode_reproduces_the_missing_field_traps() -> None:
    # 1: run -1 -> 1 s job, submit 0 -> 1; 2: allocated -1 -> 1 proc, 1 s;
    # 3: requested -1 -> runs 1 s with estimate 30.
    jobs = sim_jobs(_swf(SWF_MISSING).jobs, 4, "pyss")
    assert jobs.submit_s.tolist() == [1, 5, 10]
    assert jobs.runtime_s.tolist() == [1, 1, 1]
    assert jobs.estimate_s.tolist() == [1, 1, 30]
    assert jobs.n_procs.tolist() == [2, 1, 4]
    result = replay_jobs(jobs, "easy")
    assert result.start_s.tolist() == [1, 5, 10]
    assert result.end_s.tolist() == [2, 6, 11]


def test_default_mode_fixes_the_traps_and_reports_them() -> None:
    jobs = sim_jobs(_swf(SWF_MISSING).jobs, 4, "default")
    assert jobs.job_id.tolist() == [2, 3]
    assert jobs.n_procs.tolist() == [3, 4]
    assert jobs.estimate_s.tolist() == [50, 30]
    assert jobs.notes["dropped_missing_runtime"] == 1
    assert jobs.notes["procs_from_requested"] == 1
    assert jobs.notes["estimate_from_runtime"] == 2
    assert replay_jobs(jobs, "easy").start_s.tolist() == [5, 55]


def test_starting_a_job_twice_is_an_illegal_transition() -> None:
    engine = Engine(_jobs([(0, 10, 10, 1)], 4), EasyScheduler())
    engine.run()
    with pytest.raises(IllegalTransition, match="DONE -> RUNNING"):
        engine.start(0)


def test_a_job_wider_than_the_machine_is_refused() -> None:
    with pytest.raises(ValueError, match="block the queue forever"):
        Engine(_jobs([(0, 10, 10, 8)], 4), EasyScheduler())


def test_tsafrir_estimates_use_the_users_last_two_finished_jobs() -> None:
    # Same user: 100 s and 300 s jobs finish before the third is submitted, so its
    # estimate is min(1000, 200) = 200.
    jobs = _jobs([(0, 100, 1000, 1), (0, 300, 1000, 1), (500, 50, 1000, 1)], 4)
    result = replay_jobs(jobs, "easy", "tsafrir")
    assert result.estimate_s.tolist() == [1000, 1000, 200]
    assert result.estimates == "tsafrir"


def test_array_estimates_drive_the_backfill_decision() -> None:
    # The "must not backfill" trace, but C's estimate says 90 s: C now ends (by its
    # estimate) before the shadow and backfills; it really runs 200 s and delays B.
    rows = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 200, 200, 3)]
    result = replay_jobs(_jobs(rows, 10), "easy", np.array([100, 50, 90]))
    assert result.start_s.tolist() == [0, 202, 2]
    assert result.estimate_s.tolist() == [100, 50, 90]


def test_a_callable_gives_the_estimates_from_the_jobs() -> None:
    rows = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 200, 200, 3)]

    def shorter_for_narrow(jobs):
        return np.where(jobs.n_procs == 3, 90.0, jobs.estimate_s)

    result = replay_jobs(_jobs(rows, 10), "easy", shorter_for_narrow)
    assert result.start_s.tolist() == [0, 202, 2]


def test_unknown_estimate_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="requested"):
        replay_jobs(_jobs(BACKFILL, 10), "easy", "oracle")


def test_a_job_past_its_estimate_is_expected_at_its_requested_end() -> None:
    # A (3 procs) is predicted to run 10 s but asked for 100 s and runs 100 s. At 20
    # B (4) is the blocked head: A is expected at its requested end (100), so C
    # (1 proc, ends at 70) backfills into the free processor without delaying B.
    rows = [(0, 100, 100, 3), (1, 50, 50, 4), (20, 50, 50, 1)]
    result = replay_jobs(_jobs(rows, 4), "easy", np.array([10.0, 50, 50]))
    assert result.start_s.tolist() == [0, 100, 20]
    assert result.reservation_s[1] == 100


def test_progress_is_reported_in_increasing_fractions() -> None:
    n = 20_000
    jobs = sim_jobs_from_arrays(
        np.arange(n, dtype=float), np.full(n, 5.0), np.full(n, 5.0), np.ones(n, int), 4
    )
    seen: list[float] = []
    Engine(jobs, EasyScheduler(), progress=seen.append).run()
    assert len(seen) >= 2
    assert seen == sorted(seen) and 0 < seen[0] and seen[-1] <= 1
