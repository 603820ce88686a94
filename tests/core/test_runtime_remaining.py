"""A running job's runtime given how long it has run (``predictor.core.runtime.remaining``),
and the queue-based start it gives (``jobmolding.core.future``), on hand-worked cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobmolding.core.future import forward_starts, predicted_ends
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.runtime.remaining import LimitFractions, runtime_given_elapsed
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import ActiveJobs, Snapshot


def rs(*ranges: tuple[float, float, float]) -> RangeSet:
    low, high, p = (np.array(c, float) for c in zip(*ranges, strict=True))
    return RangeSet(low, high, p)


SHORT_OR_LONG = rs((100, 200, 0.5), (900, 1100, 0.5))  # point 0.5 x 150 + 0.5 x 1000 = 575


def test_before_any_range_the_point_is_kept():
    assert runtime_given_elapsed(SHORT_OR_LONG, 0.0, 3600) == 575.0
    assert runtime_given_elapsed(SHORT_OR_LONG, 100.0, 3600) == 575.0


def test_a_job_past_the_short_range_is_expected_in_the_long_one():
    assert runtime_given_elapsed(SHORT_OR_LONG, 500.0, 3600) == 1000.0
    # inside the short range: its upper part (150-200, weight 0.25) against the long range
    # (weight 0.5): (0.25 x 175 + 0.5 x 1000) / 0.75
    assert runtime_given_elapsed(SHORT_OR_LONG, 150.0, 3600) == pytest.approx(725.0)


def test_inside_a_range_only_its_part_above_the_elapsed_time_counts():
    assert runtime_given_elapsed(rs((0, 1000, 1.0)), 600.0, 3600) == 800.0
    assert runtime_given_elapsed(rs((0, 1000, 0.6)), 600.0, 3600) == 800.0  # renormalised


def test_a_job_that_outlived_every_range_is_expected_halfway_to_its_limit():
    assert runtime_given_elapsed(SHORT_OR_LONG, 1300.0, 3300) == 2300.0
    assert runtime_given_elapsed(SHORT_OR_LONG, 1300.0, 0.0) == 1300.0  # no limit: now
    assert runtime_given_elapsed(SHORT_OR_LONG, 4000.0, 3600) == 3600.0  # past it: the limit


def test_the_estimate_never_passes_the_limit_and_a_point_range_counts_whole():
    assert runtime_given_elapsed(SHORT_OR_LONG, 500.0, 950) == 950.0
    point = rs((300, 300, 0.5), (600, 600, 0.5))
    assert runtime_given_elapsed(point, 350.0, 3600) == 600.0


# User 1's finished jobs ran these fractions of their limits; user 2's, three others.
USER1 = [0.1, 0.1, 0.2, 0.2, 0.9, 0.95, 1.0, 1.0, 1.0, 1.0]
USER2 = [0.5, 0.5, 0.96]


def fractions() -> LimitFractions:
    frac = np.array(USER1 + USER2)
    limit = np.full(frac.size, 1000.0)
    return LimitFractions.from_history(
        pd.DataFrame({
            "user_id": [1] * len(USER1) + [2] * len(USER2),
            "run_time": frac * limit,
            "requested_time": limit,
        })
    )  # fmt: skip


def test_a_job_that_has_run_long_is_expected_to_run_like_the_users_long_jobs():
    f = fractions()
    got = f.runtime_given_elapsed(np.array([1, 1, 1, 1]), np.array([0, 500, 1900, 2500.0]),
                                  np.full(4, 2000.0))  # fmt: skip
    # nothing ruled out: the user's mean fraction, 6.45 / 10, of the 2,000 s limit
    assert got[0] == pytest.approx(1290.0)
    # 500 s of 2,000 (0.25): six of the user's jobs ran that far, mean 5.85 / 6
    assert got[1] == pytest.approx(1950.0)
    # 0.95: only four of the user's (1.0 each): every user's five, 0.96 and four 1.0
    assert got[2] == pytest.approx(2000.0 * 4.96 / 5)
    assert got[3] == 2000.0  # past its limit: the limit (the scheduler ends it)


def test_a_user_without_history_gets_every_users_fractions():
    got = fractions().runtime_given_elapsed(np.array([7]), np.array([0.0]), np.array([100.0]))
    assert got[0] == pytest.approx(100.0 * (6.45 + 1.96) / 13)
    empty = LimitFractions.from_history(
        pd.DataFrame({"user_id": [1], "run_time": [-1.0], "requested_time": [100.0]})
    )
    assert empty.runtime_given_elapsed(np.array([1]), np.array([10.0]), np.array([100.0]))[0] == 100


def running_snapshot() -> Snapshot:
    """128 processors at t = 0: two jobs of user 1 with 2,000 s limits, 64 processors each;
    A has run 500 s, B has just started; nothing queued."""
    running = RequestBatch.of(
        [JobRequest(user=1, procs=64, req_time_s=2000, submit_s=-600.0, job_id=k) for k in (1, 2)]
    )
    none = RequestBatch.of([])
    return Snapshot(
        time_s=0.0, known_at_s=0.0,
        waiting=ActiveJobs(none, np.zeros(0), np.zeros(0, np.int64)),
        running=ActiveJobs(running, np.array([-500.0, 0.0]), np.array([64, 64])),
        history=pd.DataFrame(), machine_procs=128,
    )  # fmt: skip


def test_a_whole_machine_request_starts_when_the_running_jobs_are_expected_to_end():
    """A is expected to run 1,950 s (1,450 s from now), B 1,290 s: a whole-machine request
    starts at 1,450 s, a half-machine one at 1,290 s. Their rangeSets (a point of 300 s)
    are not asked for: both have a limit."""
    snap = running_snapshot()

    def no_ranges(batch):
        raise AssertionError("jobs with a limit are answered from the fractions")

    ends = predicted_ends(snap, fractions(), no_ranges)
    assert ends == pytest.approx([1450.0, 1290.0])
    for procs, expected in ((128, 1450.0), (64, 1290.0)):
        new = RequestBatch.of([JobRequest(user=2, procs=procs, req_time_s=600, submit_s=0.0)])
        start, _ = forward_starts(snap, ends, np.zeros(0), new, np.array([300.0]))
        assert start[-1] == pytest.approx(expected)


def test_without_fractions_or_a_limit_the_rangeset_is_conditioned():
    """A (100-200 s or 900-1100 s, equally likely) has run 500 s: a long one, ending 500 s
    from now (the unconditional point, 575 s, is already past)."""
    snap = running_snapshot()
    ranges = [SHORT_OR_LONG, rs((50, 250, 1.0))]
    ends = predicted_ends(snap, None, lambda batch: ranges)
    assert ends.tolist() == [500.0, runtime_given_elapsed(ranges[1], 0.0, 2000)]
