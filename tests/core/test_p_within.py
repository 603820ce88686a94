"""P(start within T): the share of the recent jobs predicted most like the request."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.p_within import neighbours, p_within


def _brute(pred: float, recent_pred: np.ndarray, recent_wait: np.ndarray, t: float, k: int):
    """The definition, one job at a time: nearest on log(1 + p), ties to the later arrival."""
    d = [abs(np.log1p(max(q, 0.0)) - np.log1p(max(pred, 0.0))) for q in recent_pred]
    order = sorted(range(len(d)), key=lambda j: (d[j], -j))[:k]
    return float(np.mean([recent_wait[j] <= t for j in order]))


def test_the_share_of_the_k_recent_jobs_predicted_nearest_that_started_within_t():
    rng = np.random.default_rng(3)
    recent_pred = np.round(rng.exponential(900.0, 700), -2)  # many ties
    recent_wait = rng.exponential(1500.0, 700)
    preds = np.array([0.0, 50.0, 900.0, 30000.0])
    for t in (60.0, 1800.0, 7200.0):
        got = p_within(preds, recent_pred, recent_wait, t, k=150)
        want = [_brute(p, recent_pred, recent_wait, t, 150) for p in preds]
        np.testing.assert_array_equal(got, want)


def test_it_follows_the_prediction_not_the_shifted_errors():
    # jobs predicted short started at once; jobs predicted long waited hours
    recent_pred = np.r_[np.full(300, 10.0), np.full(300, 20000.0)]
    recent_wait = np.r_[np.zeros(300), np.full(300, 30000.0)]
    p = p_within(np.array([20.0, 15000.0]), recent_pred, recent_wait, 60.0, k=200)
    np.testing.assert_array_equal(p, [1.0, 0.0])
    # the errors shifted by the request's own 20 s (the rule until stop 58) say 0.5
    errors = np.sort(recent_wait - recent_pred)
    assert np.searchsorted(errors, 60.0 - 20.0, side="right") / errors.size == 0.5


def test_ties_go_to_the_jobs_that_arrived_last_and_few_jobs_count_whole():
    recent_pred = np.zeros(300)
    recent_wait = np.r_[np.full(100, 5000.0), np.zeros(200)]
    assert p_within(np.array([0.0]), recent_pred, recent_wait, 60.0, k=200)[0] == 1.0
    assert set(neighbours(np.array([0.0]), recent_pred, 200)[0]) == set(range(100, 300))
    few = p_within(np.array([0.0]), recent_pred[:50], recent_wait[:50], 60.0, k=200)
    assert few[0] == 0.0 and neighbours(np.array([0.0]), recent_pred[:50], 200).shape == (1, 50)
    with pytest.raises(ValueError, match="no started jobs"):
        p_within(np.array([0.0]), np.zeros(0), np.zeros(0), 60.0)


def test_it_grows_with_t():
    rng = np.random.default_rng(4)
    recent_pred, recent_wait = rng.exponential(900.0, 1000), rng.exponential(900.0, 1000)
    ps = [p_within(np.array([700.0]), recent_pred, recent_wait, t)[0] for t in (0, 60, 600, 6000)]
    assert ps == sorted(ps) and ps[0] < ps[-1]
