"""Peers on tiny traces: baseline [min, max], Tsafrir, requested time, the AAE range, Li and
the quantile range (trained on the past only)."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.runtime.history import build_context
from predictor.core.runtime.li import LiKnnPredictor
from predictor.core.runtime.peers import BaselineRange, PointMethod, RequestedTime, TsafrirPredictor
from predictor.core.runtime.quantile import QuantileGBRange
from predictor.core.runtime.targets import RuntimeTargets
from tests.core.test_load import make_jobs


def _ctx(rows: list[dict], n_tune: int = 1):
    return build_context(make_jobs(rows), 8, n_tune=n_tune)


def targets_of(ctx, index: list[int]) -> RuntimeTargets:
    return RuntimeTargets.from_rows(ctx, np.array(index))


class FixedPoints(PointMethod):
    """A point method answering a given point per log row (to test the AAE range alone)."""

    def __init__(self, by_row: np.ndarray) -> None:
        self.by_row = by_row

    def points(self, targets: RuntimeTargets, progress: object) -> np.ndarray:
        return self.by_row[targets.rows]


# User 1: runtimes 100, 300, then a target at t=5000 with requested time 150.
TSAFRIR_ROWS = [
    {"submit_time": 0, "run_time": 100},
    {"submit_time": 1000, "run_time": 300},
    {"submit_time": 5000, "run_time": 120, "requested_time": 150},
    {"submit_time": 5001, "run_time": 50, "user_id": 2, "requested_time": 700},
]


def test_tsafrir_averages_the_last_two_and_caps_by_the_request() -> None:
    ctx = _ctx(TSAFRIR_ROWS)
    points = TsafrirPredictor().fit(ctx).points(targets_of(ctx, [1, 2, 3]), None)
    # Row 1: only 100 known; row 2: (100 + 300) / 2 = 200 capped at 150; row 3: new user ->
    # its requested time.
    np.testing.assert_allclose(points, [100, 150, 700])


def test_baseline_is_min_max_of_the_tuple_history() -> None:
    ctx = _ctx(TSAFRIR_ROWS)
    pred = BaselineRange().fit(ctx).predict_rows(np.array([2])).ranges[0]
    assert (pred.low_s[0], pred.high_s[0], pred.point_s) == (100, 300, 200)


def test_baseline_ignores_jobs_still_running() -> None:
    rows = [
        {"submit_time": 0, "run_time": 100},
        {"submit_time": 50, "run_time": 9999},
        {"submit_time": 200, "run_time": 10},
    ]
    ctx = _ctx(rows)
    pred = BaselineRange().fit(ctx).predict_rows(np.array([2])).ranges[0]
    assert (pred.low_s[0], pred.high_s[0]) == (100, 100)


def test_requested_time_is_the_point() -> None:
    ctx = _ctx(TSAFRIR_ROWS)
    assert RequestedTime().fit(ctx).points(targets_of(ctx, [2, 3]), None).tolist() == [150, 700]


def test_aae_range_is_centred_on_the_point_with_the_history_error_as_width() -> None:
    ctx = _ctx(TSAFRIR_ROWS)
    points = np.array([150.0, 200.0, 400.0, 10.0])  # errors on history: 50, 100
    pred = FixedPoints(points).fit(ctx).predict_rows(np.array([2])).ranges[0]
    assert (pred.low_s[0], pred.high_s[0]) == (150.0, 150.0)  # [362.5, 437.5] clipped
    pred = FixedPoints(np.array([150.0, 200.0, 100.0, 10.0])).fit(ctx).predict_rows([2]).ranges[0]
    assert (pred.low_s[0], pred.high_s[0]) == pytest.approx((62.5, 137.5))


def test_li_knn_prefers_the_same_user_and_size() -> None:
    rows = [
        {
            "submit_time": i,
            "run_time": 100,
            "user_id": 1,
            "requested_procs": 4,
            "allocated_procs": 4,
        }
        for i in range(5)
    ]
    rows += [
        {"submit_time": 10 + i, "run_time": 5000, "user_id": 2, "requested_procs": 1}
        for i in range(5)
    ]
    rows += [
        {
            "submit_time": 20000,
            "run_time": 100,
            "user_id": 1,
            "requested_procs": 4,
            "allocated_procs": 4,
            "requested_time": 10000,
        }
    ]
    ctx = _ctx(rows)
    point = LiKnnPredictor(k=3).fit(ctx).points(targets_of(ctx, [10]), None)
    assert point[0] == pytest.approx(100.0)


def test_quantile_range_uses_only_jobs_ended_before_the_target() -> None:
    rows = [
        {"submit_time": 100 * i, "run_time": 50 + (i % 5), "requested_time": 5000}
        for i in range(60)
    ]
    rows.append({"submit_time": 100 * 60, "run_time": 52, "requested_time": 5000})
    ctx = _ctx(rows, n_tune=60)  # one model, trained at the tuning end (row 60)
    model = QuantileGBRange(n_retrain=1, max_iter=20).fit(ctx)
    pred = model.predict_rows(np.array([60])).ranges[0]
    assert 49 <= pred.low_s[0] <= pred.point_s <= pred.high_s[0] <= 55
    future = [dict(r) for r in rows]
    future[-1]["run_time"] = 99999.0  # the target's own runtime is never training data
    ctx2 = _ctx(future, n_tune=60)
    pred2 = QuantileGBRange(n_retrain=1, max_iter=20).fit(ctx2).predict_rows([60]).ranges[0]
    assert pred2.point_s == pytest.approx(pred.point_s)


def test_metrics_by_hand() -> None:
    from predictor.core.runtime.metrics import runtime_metrics

    m = runtime_metrics(
        actual_s=np.array([100.0, 200.0, 50.0]),
        success=np.array([True, False, True]),
        length_s=np.array([10.0, 30.0, 5.0]),
        baseline_length_s=np.array([100.0, 100.0, 0.0]),  # the empty baseline is left out
        point_s=np.array([110.0, 100.0, 50.0]),
    )
    assert m["jobs"] == 3
    assert m["success_rate"] == pytest.approx(2 / 3)
    assert m["coverage"] == pytest.approx(40 / 200)
    assert m["coverage_median"] == pytest.approx(0.2)
    assert m["aae_s"] == pytest.approx(110 / 3)
    assert m["mean_pct_error"] == pytest.approx((0.1 + 0.5 + 0.0) / 3)


def test_targets_are_later_jobs_with_positive_runtime_evenly_spread() -> None:
    from predictor.core.runtime.evaluate import select_targets

    rows = [{"submit_time": i, "run_time": 0 if i % 10 == 0 else 5} for i in range(100)]
    ctx = _ctx(rows, n_tune=20)
    every = select_targets(ctx)
    assert every.min() >= 20 and (ctx.run_s[every] > 0).all() and every.size == 72
    picked = select_targets(ctx, limit=5)
    assert picked.size == 5 and picked[0] == every[0] and picked[-1] == every[-1]
