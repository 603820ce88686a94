"""Online accuracy on the most recent jobs (``predictor.core.accuracy``)."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.accuracy import recent_order, recent_runtime_accuracy, recent_wait_accuracy


def test_recent_order_takes_the_last_known_facts_only():
    known = np.array([5.0, 1.0, 9.0, 3.0, np.inf])
    np.testing.assert_array_equal(recent_order(known, 6.0, n=2), [3, 0])
    assert recent_order(known, 0.5).size == 0
    with pytest.raises(ValueError, match="n must be"):
        recent_order(known, 1.0, n=0)


def test_recent_wait_accuracy_compares_with_always_zero_on_started_jobs():
    submit = np.array([0.0, 10.0, 20.0, 30.0])
    wait = np.array([100.0, 50.0, 10.0, 1000.0])  # starts 100, 60, 30, 1030
    pred = np.array([90.0, 0.0, 30.0, 0.0])
    acc = recent_wait_accuracy(pred, wait, submit, known_at_s=200.0)
    assert acc.jobs == 3  # the last job has not started by 200 s
    assert acc.aae_s == pytest.approx((10 + 50 + 20) / 3)
    assert acc.zero_aae_s == pytest.approx(160 / 3)
    assert acc.better_than_zero and acc.ratio_to_zero == pytest.approx(0.5)
    worse = recent_wait_accuracy(wait + 100.0, wait, submit, 200.0, n=2)
    assert worse.jobs == 2 and not worse.better_than_zero
    assert worse.zero_aae_s == pytest.approx(75.0)  # the two latest starts: waits 100 s, 50 s


def test_recent_wait_accuracy_with_nothing_started_says_zero_jobs():
    acc = recent_wait_accuracy(np.zeros(2), np.array([5.0, -1.0]), np.zeros(2), 1.0)
    assert acc.jobs == 0 and np.isnan(acc.aae_s) and not acc.better_than_zero
    assert acc.as_dict()["better_than_zero"] is False


def test_recent_runtime_accuracy_against_the_requested_time():
    end = np.array([10.0, 20.0, 30.0, 40.0])
    acc = recent_runtime_accuracy(
        success=np.array([1, 1, 0, 1], bool), length_s=np.array([10.0, 10.0, 10.0, 10.0]),
        requested_success=np.array([0, 1, 0, 1], bool),
        requested_length_s=np.array([5.0, 5.0, 5.0, 5.0]),
        baseline_length_s=np.array([100.0, 100.0, 0.0, 100.0]), end_s=end, known_at_s=35.0,
    )  # fmt: skip
    assert acc.jobs == 3
    assert acc.success == pytest.approx(2 / 3) and acc.requested_success == pytest.approx(1 / 3)
    assert acc.coverage == pytest.approx(20 / 200) and acc.requested_coverage == pytest.approx(0.05)
    assert acc.better_than_requested
    same = recent_runtime_accuracy(
        np.ones(2, bool), np.ones(2), np.ones(2, bool), np.ones(2), np.ones(2), np.zeros(2), 1.0
    )
    assert not same.better_than_requested
