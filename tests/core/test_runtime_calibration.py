"""Range probabilities: reliability table, ECE, online isotonic recalibration without leakage."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.runtime.calibration import (
    OnlineRecalibration,
    apply_calibration,
    expected_calibration_error,
    fit_calibration,
    reliability_table,
)


def test_reliability_table_bins_stated_against_observed():
    prob = np.array([0.05, 0.15, 0.12, 0.65, 0.95, 1.0])
    hit = np.array([0, 1, 0, 1, 1, 1])
    rows = reliability_table(prob, hit)
    assert [r["bin"] for r in rows] == ["[0.0, 0.1)", "[0.1, 0.2)", "[0.6, 0.7)", "[0.9, 1.0)"]
    assert rows[1] == {"bin": "[0.1, 0.2)", "ranges": 2, "stated": 0.135, "observed": 0.5}
    assert rows[-1]["ranges"] == 2  # 1.0 falls in the last bin
    with pytest.raises(ValueError, match="shape"):
        reliability_table(prob, hit[:3])


def test_ece_is_zero_when_calibrated_and_large_when_overconfident():
    rng = np.random.default_rng(0)
    prob = rng.uniform(0, 1, 50000)
    hit = rng.uniform(0, 1, 50000) < prob
    assert expected_calibration_error(prob, hit) < 0.01
    assert expected_calibration_error(np.clip(prob * 1.6, 0, 1), hit) > 0.15


def test_online_recalibration_fixes_an_overconfident_model_from_the_past_only():
    rng = np.random.default_rng(1)
    n = 6000
    arrival = np.arange(n, dtype=float) * 10
    known = arrival + 5  # each outcome known before the next arrival
    prob = rng.uniform(0.2, 1.0, n)
    hit = rng.uniform(0, 1, n) < prob / 2  # the truth is half the stated probability
    owner = np.arange(n)
    recal = OnlineRecalibration(every=500, min_ranges=200)
    fixed = recal.transform(prob, owner, hit, arrival, known)
    np.testing.assert_array_equal(fixed[:500], prob[:500])  # nothing known before block 0
    late = owner >= 1000
    assert expected_calibration_error(fixed[late], hit[late]) < 0.05
    assert expected_calibration_error(prob[late], hit[late]) > 0.2
    changed = hit.copy()
    changed[3000:] = ~changed[3000:]  # outcomes after target 3000 cannot move earlier answers
    again = recal.transform(prob, owner, changed, arrival, known)
    np.testing.assert_array_equal(fixed[:3000], again[:3000])


def test_calibration_fitted_on_known_ranges_maps_overconfident_probabilities_to_observed():
    rng = np.random.default_rng(1)
    stated = rng.uniform(0, 1, 5000)
    hit = rng.uniform(0, 1, 5000) < 0.6 * stated  # each range holds 0.6 of what it states
    knots = fit_calibration(stated, hit)
    mapped = apply_calibration(stated, knots)
    assert expected_calibration_error(stated, hit) > 0.15
    assert expected_calibration_error(mapped, hit) < 0.03
    assert apply_calibration(np.array([0.5]), knots)[0] == pytest.approx(0.3, abs=0.05)


def test_calibration_with_too_few_known_ranges_is_the_identity():
    knots = fit_calibration(np.array([0.9, 0.8]), np.array([0, 0]))
    np.testing.assert_allclose(apply_calibration(np.array([0.1, 0.7]), knots), [0.1, 0.7])
