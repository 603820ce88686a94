"""The user's record as GBM features, on a hand-made history: values, and only the past counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from predictor.core.runtime.history import build_context
from predictor.core.runtime.quantile import QuantileGBRange
from predictor.core.runtime.targets import RuntimeTargets
from predictor.core.runtime.user_features import COLUMNS, UserTimes, user_record
from tests.core.test_load import make_jobs

# User 1; the target is row 3 (submit 600, 1 processor, requested 600 s).
# row 0: [0, 100), 1 proc, requested 200     -> ended by 600
# row 1: [10, 410), 2 procs, requested 400    -> ended by 600, hit its limit
# row 2: [500, 800), 1 proc, requested 1000   -> still running at 600
HISTORY = [
    {"submit_time": 0, "run_time": 100, "requested_time": 200},
    {"submit_time": 10, "run_time": 400, "requested_time": 400, "requested_procs": 2,
     "allocated_procs": 2},
    {"submit_time": 500, "run_time": 300, "requested_time": 1000},
    {"submit_time": 600, "run_time": 50, "requested_time": 600},
    {"submit_time": 700, "run_time": 20, "requested_time": 60, "user_id": 2},
]  # fmt: skip


def record(rows: list[dict], target: int = 3) -> np.ndarray:
    ctx = build_context(make_jobs(rows), 8, n_tune=1)
    targets = RuntimeTargets.from_rows(ctx, np.array([target]))
    return user_record(ctx, targets, UserTimes.of(ctx))[0]


def test_user_record_of_a_hand_made_history() -> None:
    got = dict(zip(COLUMNS, record(HISTORY), strict=True))
    # Last ended: row 1 (ended 410), used 400 / 400 of its request -> 1.0 * 600 s.
    assert got["carry"] == pytest.approx(math.log(600))
    assert got["same"] == 0.0  # row 1 asked 2 processors and 400 s
    assert got["median_k"] == pytest.approx((math.log(100) + math.log(400)) / 2)
    assert got["spread_k"] == pytest.approx((math.log(400) - math.log(100)) / 2)
    assert got["hit"] == 0.5  # row 1 of rows 0 and 1
    assert got["since"] == pytest.approx(math.log1p(100))  # row 2 submitted at 500
    assert got["active"] == 1.0  # rows 0-2 submitted, rows 0-1 ended


def test_a_job_ending_after_the_target_submits_changes_nothing() -> None:
    later = [dict(r) for r in HISTORY]
    later[2]["run_time"] = 5000  # still ends after 600
    np.testing.assert_array_equal(record(later), record(HISTORY))
    earlier = [dict(r) for r in HISTORY]
    earlier[2]["run_time"] = 50  # now ends at 550, before the target: it must count
    assert not np.array_equal(record(earlier), record(HISTORY), equal_nan=True)


def test_a_user_without_history_gets_missing_values() -> None:
    got = dict(zip(COLUMNS, record(HISTORY, target=4), strict=True))
    assert all(math.isnan(got[c]) for c in COLUMNS if c != "active")
    assert got["active"] == 0.0


def test_feature_sets_add_the_named_columns_to_the_request_features() -> None:
    ctx = build_context(make_jobs(HISTORY), 8, n_tune=3)
    targets = RuntimeTargets.from_rows(ctx, np.arange(5))
    base = QuantileGBRange(max_iter=5, feature_set="request").fit(ctx).features(targets)
    two = QuantileGBRange(max_iter=5, feature_set="carry+active").fit(ctx).features(targets)
    every = QuantileGBRange(max_iter=5, feature_set="user").fit(ctx).features(targets)
    assert base.shape == (5, 9) and two.shape == (5, 11) and every.shape == (5, 16)
    np.testing.assert_array_equal(two[:, :9], base)
    np.testing.assert_array_equal(two[:, 9:], every[:, [9, 15]])
    with pytest.raises(ValueError, match="unknown"):
        QuantileGBRange(feature_set="carry+nope").fit(ctx)


def test_a_model_pickled_before_feature_sets_keeps_the_request_features() -> None:
    ctx = build_context(make_jobs(HISTORY), 8, n_tune=3)
    fitted = QuantileGBRange(max_iter=5, feature_set="request").fit(ctx)
    state = {k: v for k, v in fitted.__dict__.items() if k not in ("feature_set", "times_")}
    old = QuantileGBRange.__new__(QuantileGBRange)
    old.__setstate__(state)
    targets = RuntimeTargets.from_rows(ctx, np.arange(5))
    np.testing.assert_array_equal(old.features(targets), fitted.features(targets))
