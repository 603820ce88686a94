"""Wait metrics: AAE, scaled AAE, wait classes, the "correct" slabs, paired bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait import metrics as wm


def test_aae_and_scaled_aae_by_hand():
    pred = np.array([100.0, 0.0])
    wait = np.array([0.0, 300.0])
    run = np.array([100.0, 300.0])
    assert wm.aae(pred, wait) == 200.0
    assert wm.scaled_aae(pred, wait, run) == pytest.approx((100 / 100 + 300 / 600) / 2)


def test_scaled_aae_floors_a_zero_response_at_one_second():
    assert wm.scaled_aae(np.array([5.0]), np.array([0.0]), np.array([0.0])) == 5.0


def test_wait_classes_have_closed_lower_edges():
    waits = np.array([0, 99.9, 100, 999, 1000, 9999, 10_000, 99_999, 100_000, 1e7])
    np.testing.assert_array_equal(wm.wait_class(waits), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])


def test_aae_by_class_groups_by_actual_wait():
    out = wm.aae_by_class(np.array([0.0, 0.0, 500.0]), np.array([50.0, 70.0, 200_000.0]))
    assert out["[0,100s)"] == {"jobs": 2, "aae_s": 60.0}
    assert out[">=1e5s"]["aae_s"] == 199_500.0
    assert out["[100,1000s)"] == {"jobs": 0, "aae_s": None}


@pytest.mark.parametrize(
    ("pred_h", "allowed_h"),
    [(0.5, 1), (1, 1), (3, 1), (5, 1), (10, 3), (20, 6), (30, 12), (48, 12), (49, 24)],
)
def test_allowed_error_is_one_hour_or_the_slab_of_the_prediction(pred_h, allowed_h):
    assert wm.allowed_error_s(np.array([pred_h * 3600.0]))[0] == allowed_h * 3600.0


def test_correct_share_counts_errors_within_the_slab():
    pred = np.array([0.0, 20 * 3600.0, 20 * 3600.0, 100 * 3600.0])
    wait = np.array([3000.0, 15 * 3600.0, 13 * 3600.0, 80 * 3600.0])
    # ok (<=1 h); 5 h <= 6 h ok; 7 h > 6 h wrong; 20 h <= 24 h ok
    assert wm.correct_share(pred, wait) == 0.75


def test_bootstrap_interval_contains_the_observed_difference_and_is_reproducible():
    rng = np.random.default_rng(0)
    a = rng.exponential(100.0, 2000)
    b = a * 0.8
    ci = wm.paired_bootstrap_ci(a, b, rng=np.random.default_rng(1), n_boot=300)
    again = wm.paired_bootstrap_ci(a, b, rng=np.random.default_rng(1), n_boot=300)
    assert ci == again
    assert ci["lo_s"] < ci["diff_s"] < ci["hi_s"]
    assert ci["lo_s"] > 0  # a is worse on every job, so the interval excludes 0


def test_bootstrap_of_identical_errors_is_zero_width():
    err = np.arange(10.0)
    ci = wm.paired_bootstrap_ci(err, err, rng=np.random.default_rng(0), n_boot=50)
    assert ci == {"diff_s": 0.0, "lo_s": 0.0, "hi_s": 0.0}


def test_summarise_has_the_json_keys_and_optional_parts():
    pred = np.array([10.0, 20.0])
    wait = np.array([10.0, 40.0])
    out = wm.summarise(pred, wait, np.ones(2), predictor=np.array(["a", "b"]), upper_s=wait)
    assert {"jobs", "aae_s", "scaled_aae", "correct_share", "aae_h"} <= out.keys()
    assert out["jobs"] == 2 and out["aae_s"] == 10.0
    assert out["predictor_mix"] == {"a": 0.5, "b": 0.5}
    assert out["upper_coverage"] == 1.0
    assert "predictor_mix" not in wm.summarise(pred, wait, np.ones(2))
