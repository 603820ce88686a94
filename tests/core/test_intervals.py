"""Calibrated wait intervals: split-conformal maths, the online rule and its leakage guard."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.intervals import (
    check_level,
    interval_from_pool,
    known_order,
    online_intervals,
    scores,
    shortest_run,
)


def test_shortest_run_takes_the_tightest_k_consecutive_scores():
    # n = 9, level 0.5 -> k = ceil(0.5 * 10) = 5; runs of 5: widths 4-0, 5-1, 6-2, 100-3, 200-4
    e = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 100.0, 200.0])
    assert shortest_run(e, 0.5) == (0.0, 4.0)
    assert shortest_run(e, 0.95) == (0.0, 200.0)  # k >= n: the whole pool


def test_diff_interval_is_prediction_plus_score_bounds_clipped_at_zero():
    pool = np.array([-50.0, -10.0, 0.0, 10.0, 20.0, 30.0, 40.0, 500.0, 900.0])
    lo, hi = interval_from_pool(np.array([5.0, 1000.0]), pool, 0.5)
    # k = 5: shortest run is [-10, 30] (width 40) -> [5-10, 5+30] clipped, [990, 1030]
    np.testing.assert_allclose(lo, [0.0, 990.0])
    np.testing.assert_allclose(hi, [35.0, 1030.0])


def test_ratio_score_maps_back_multiplicatively():
    e = scores(np.array([9.0]), np.array([19.0]), "ratio")
    np.testing.assert_allclose(e, [2.0])
    lo, hi = interval_from_pool(np.array([99.0]), np.full(20, 2.0), 0.9, score="ratio")
    np.testing.assert_allclose([lo[0], hi[0]], [199.0, 199.0])


def test_split_conformal_covers_exchangeable_data_at_the_stated_level():
    rng = np.random.default_rng(0)
    cal = rng.lognormal(7, 2, 4000) - rng.lognormal(7, 1, 4000)
    test_y = rng.lognormal(7, 2, 20000)
    test_p = rng.lognormal(7, 1, 20000)
    for level in (0.8, 0.9):
        lo, hi = interval_from_pool(test_p, cal, level)
        cover = np.mean((test_y >= lo) & (test_y <= hi))
        assert abs(cover - level) < 0.02


def test_online_intervals_hold_their_level_under_drift():
    rng = np.random.default_rng(1)
    n = 6000
    arrival = np.cumsum(rng.exponential(60.0, n))
    scale = np.where(np.arange(n) < n // 2, 300.0, 3000.0)  # the site gets 10x busier
    wait = rng.exponential(scale)
    pred = np.full(n, 300.0)  # a method that does not notice
    res = online_intervals(pred, wait, arrival, arrival + wait, (0.8, 0.9))
    summary = res.summary(wait)
    for level in ("0.8", "0.9"):
        assert abs(summary[level]["coverage"] - float(level)) < 0.03
    plain = online_intervals(pred, wait, arrival, arrival + wait, (0.9,), gamma=0.0)
    assert res.summary(wait)["0.9"]["coverage"] >= plain.summary(wait)["0.9"]["coverage"]


def test_online_interval_ignores_waits_not_yet_known_at_arrival():
    rng = np.random.default_rng(2)
    n = 800
    arrival = np.cumsum(rng.exponential(100.0, n))
    wait = rng.exponential(500.0, n)
    pred = rng.exponential(500.0, n)
    before = online_intervals(pred, wait, arrival, arrival + wait, (0.8,), min_pool=10)
    later = wait.copy()
    later[400:] = 1e7  # rows from 400 on: unknown to every row before 400
    after = online_intervals(pred, later, arrival, arrival + later, (0.8,), min_pool=10)
    np.testing.assert_array_equal(before.low_s[0.8][:400], after.low_s[0.8][:400])
    np.testing.assert_array_equal(before.high_s[0.8][:400], after.high_s[0.8][:400])
    assert before.pool_size[0] == 0 and np.isinf(before.high_s[0.8][0])  # uncalibrated


def test_known_order_counts_same_second_starts_only_for_earlier_rows():
    arrival = np.array([0.0, 10.0, 10.0, 20.0])
    known = np.array([10.0, 10.0, 30.0, 25.0])  # rows 0 and 1 start at 10
    order, count = known_order(arrival, known)
    np.testing.assert_array_equal(order, [0, 1, 3, 2])
    np.testing.assert_array_equal(count, [0, 1, 2, 2])  # row 2 (t=10) knows rows 0 and 1


def test_groups_use_their_own_pool_once_it_is_large_enough():
    n = 400
    arrival = np.arange(n, dtype=float) * 10
    group = np.arange(n) % 2
    wait = np.where(group == 0, 5.0, 5000.0) + (np.arange(n) % 7)
    pred = np.zeros(n)
    res = online_intervals(pred, wait, arrival, arrival, (0.8,), groups=group, min_pool=20)
    late = np.arange(n) > 200
    assert np.all(res.high_s[0.8][late & (group == 0)] < 100)  # not the mixed pool's 5000s


@pytest.mark.parametrize("bad", [0.3, 0.995, 1.0])
def test_confidence_outside_half_to_099_is_refused(bad):
    with pytest.raises(ValueError, match="confidence"):
        check_level(bad)


def test_empty_pool_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="no known errors"):
        interval_from_pool(np.array([1.0]), np.array([]), 0.9)
