"""APQ: each predictor on tiny histories with known answers, structure, fallback, leakage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import DBSCAN
from sklearn.linear_model import Ridge

from predictor.core.state import histograms as hg
from predictor.core.state.request import JobRequest
from predictor.core.state.snapshot import from_log
from predictor.core.state.sweep import compute_state
from predictor.core.wait import apq_distance as dist
from predictor.core.wait import apq_predictors as pred
from predictor.core.wait.apq import APQ
from predictor.core.wait.apq_structure import check_structure, cluster_labels, point_metric
from predictor.core.wait.types import WaitContext
from tests.core.test_state import make_jobs


def test_stddev_minimiser_picks_the_flat_window():
    d = np.array([0.01, 0.02, 0.03, 0.10, 0.11, 0.12])
    wait = np.array([100.0, 5000.0, 10.0, 50.0, 50.0, 50.0])
    got = pred.stddev_minimiser(d, wait, np.zeros(6, int), width=0.04, max_start=0.2)
    assert got == (50.0, 3)


def test_stddev_minimiser_skips_outliers_and_needs_two_jobs():
    d = np.array([0.01, 0.02, 0.5])
    wait = np.array([100.0, 300.0, 7.0])
    got = pred.stddev_minimiser(d, wait, np.array([0, -1, 0]), width=0.04, max_start=0.2)
    assert got is None
    w1, w2 = np.exp(-(0.01**2)), np.exp(-(0.02**2))
    got = pred.stddev_minimiser(d, wait, np.array([0, 0, -1]), width=0.04, max_start=0.2)
    assert got[1] == 2 and got[0] == pytest.approx((w1 * 100 + w2 * 300) / (w1 + w2))


def test_ridge_closed_form_matches_sklearn():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(200, 5)), rng.normal(size=200) * 100
    x_new = rng.normal(size=5)
    expected = Ridge(alpha=0.1).fit(x, y).predict(x_new[None])[0]
    assert pred.ridge_predict(x, y, x_new, 0.1) == pytest.approx(expected, rel=1e-9)


def test_regression_recovers_a_linear_wait():
    rng = np.random.default_rng(1)
    x = np.column_stack([rng.uniform(0, 100, 300), rng.uniform(0, 10, 300)])
    wait = 500 + 20 * x[:, 0]
    w = np.array([1.0, 0.0])  # second feature weightless: left out
    radii = np.arange(0.6, 1.01, 0.1)
    got = pred.regression(np.full(300, 0.5), x, np.array([50.0, 3.0]), wait, w, radii, 10, 0.1)
    assert got[1] == 300 and got[0] == pytest.approx(1500, rel=1e-3)


def test_regression_needs_ten_jobs_per_feature_and_a_positive_answer():
    x = np.arange(20.0)[:, None]
    radii = np.arange(0.6, 1.01, 0.1)
    few = pred.regression(
        np.full(10, 0.1), x[:10], np.array([5.0]), x[:10, 0], np.ones(1), radii, 10, 0.1
    )
    assert few is None
    negative = pred.regression(
        np.full(20, 0.1), x, np.array([-100.0]), x[:, 0], np.ones(1), radii, 1, 0.1
    )
    assert negative is None


def test_weighted_average_of_k_nearest():
    d = np.array([0.3, 0.0, 0.1, 0.9])
    wait = np.array([30.0, 10.0, 20.0, 90.0])
    got = pred.weighted_average(d, wait, (1, 2, 10))
    w = np.exp(-np.array([0.0, 0.1]))
    assert got[0] == 10.0 and got[1] == pytest.approx((w * [10, 20]).sum() / w.sum())
    assert got[2] == pytest.approx((np.exp(-d) * wait).sum() / np.exp(-d).sum())


def test_weighted_median_of_k_nearest():
    d = np.array([0.0, 0.1, 0.2, 0.3, 2.0])
    wait = np.array([50.0, 10.0, 1000.0, 20.0, 7.0])
    got = pred.weighted_median(d, wait, (1, 2, 4))
    assert got[0] == 50.0  # the nearest alone
    assert got[1] == 50.0  # 10 (weight 0.90) falls short of half of 1.0 + 0.90
    # 10, 20, 50, 1000 with weights .90, .74, 1.0, .82: half (1.73) is reached at 50
    assert got[2] == 50.0


def lengthen_unknown_waits(trace: pd.DataFrame, row: int, extra_s: float) -> None:
    """Add ``extra_s`` to the waits of jobs that arrived before ``row`` but had not started
    by its submit time (their waits were not known then); asserts there are some."""
    start = (trace.submit_time + trace.wait_time).to_numpy()
    pending = (trace.index < row) & (trace.wait_time >= 0) & (start > trace.submit_time.iat[row])
    assert pending.sum() > 0
    trace.loc[pending, "wait_time"] += extra_s


def test_forced_chains_name_their_predictors(trace):
    ctx = context(trace, 300)
    targets = np.arange(350, 700, 11)
    spec = (
        APQ(history_size=400, chain="spec", k=1, spread_threshold=np.inf)
        .fit(ctx)
        .predict_rows(targets)
    )
    median = APQ(history_size=400, chain="median", k=10, spread_threshold=np.inf)
    median = median.fit(ctx).predict_rows(targets)
    assert "weighted_median" not in set(spec.predictor)
    assert not {"regression", "weighted_avg"} & set(median.predictor)
    same = spec.predictor == "stddev"
    np.testing.assert_array_equal(spec.wait_s[same], median.wait_s[same])


def test_fallback_median_uses_same_size_class_then_any():
    wait, procs = np.array([10.0, 20.0, 30.0, 1000.0]), np.array([2, 3, 4, 64])
    assert pred.fallback_median(wait, procs, 1, (4, 16, 64), 100) == (20.0, 3)
    assert pred.fallback_median(wait[:3], procs[:3], 100, (4, 16, 64), 100) == (20.0, 3)
    assert pred.fallback_median(wait[:0], procs[:0], 1, (4, 16, 64), 100) == (0.0, 0)


def test_cluster_labels_agree_with_sklearn_dbscan():
    rng = np.random.default_rng(2)
    for _ in range(30):
        d, wait = rng.uniform(0, 0.3, 41), rng.exponential(1000, 41)
        metric = point_metric(d, wait)
        ours = cluster_labels(metric, 0.04, 2)
        ref = DBSCAN(eps=0.04, min_samples=2, metric="precomputed").fit_predict(metric)
        assert np.array_equal(ours < 0, ref < 0)
        pairs = ours[:, None] == ours[None, :]
        assert np.array_equal(
            pairs[ours >= 0][:, ours >= 0], (ref[:, None] == ref[None, :])[ref >= 0][:, ref >= 0]
        )


def test_structure_good_for_tight_cluster_and_bad_for_scatter():
    args = (0.04, 2, 0.3, 0.2, 0.3)
    tight = check_structure(np.full(10, 0.05), np.repeat([100.0, 5000.0], 5), *args)
    assert tight.good and tight.n_outliers == 0 and tight.mean_cluster_size == 5
    scatter = check_structure(np.linspace(0, 0.9, 10), np.linspace(0, 1e5, 10), *args)
    assert not scatter.good and scatter.n_outliers == 10


def test_spearman_weights_prune_weak_user_features():
    rng = np.random.default_rng(3)
    wait = rng.uniform(0, 1000, 500)
    x = rng.uniform(0, 1, (500, 16))
    x[:, 2] = wait  # strong user feature
    x[:, 3] = wait + rng.normal(0, 400, 500)  # weaker user feature
    x[:, 11] = wait  # queue feature
    w = dist.spearman_weights(x, wait, 0.9)
    assert w[2] == pytest.approx(1.0) and w[3] == 0.0 and w[11] == pytest.approx(1.0)
    assert np.all(w[4:10] == 0.0)


def test_feature_distance_treats_procs_as_nominal():
    d = dist.feature_distances(
        np.array([4.0, 100.0]), np.array([[4.0, 0.0], [8.0, 200.0], [5.0, 100.0]])
    )
    np.testing.assert_allclose(d, [[0, 0.5], [1, 0.5], [1, 0]])


def test_chi2_union_bins_over_both_sets():
    got = hg.chi2_union(np.array([0.0, 10.0]), np.array([0.0, 0.0]), np.array([0, 0]), 1, 10)
    assert got[0] == pytest.approx(0.25 / 1.5 + 0.25 / 0.5)


def synthetic_trace(n: int, seed: int) -> pd.DataFrame:
    """Waits grow with the queue length, so APQ has a structure to find."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(60, n)).round()
    rows, busy_until = [], []
    for i in range(n):
        queue_len = sum(b > submit[i] for b in busy_until[-50:])
        wait = float(queue_len * 120 + rng.integers(0, 60)) if rng.random() > 0.02 else -1.0
        run = float(rng.integers(60, 3000))
        busy_until.append(submit[i] + max(wait, 0) + run)
        rows.append(
            dict(
                submit=submit[i],
                wait=wait,
                run=run,
                procs=int(rng.choice([1, 2, 4, 8, 32])),
                ert=float(run * rng.uniform(1, 3)).__round__(),
                user=int(rng.integers(1, 6)),
            )
        )
    return make_jobs(rows)


def context(jobs: pd.DataFrame, n_tune: int) -> WaitContext:
    return WaitContext(jobs=jobs, state=compute_state(jobs), n_tune=n_tune, machine_procs=64)


@pytest.fixture(scope="module")
def trace() -> pd.DataFrame:
    return synthetic_trace(700, seed=11)


def test_apq_reports_predictor_and_support_per_target(trace):
    ctx = context(trace, 300)
    apq = APQ(history_size=400, tune_targets=60).fit(ctx)
    targets = np.arange(300, 700, 7)
    got = apq.predict_rows(targets)
    assert got.wait_s.shape == targets.shape and np.all(got.wait_s >= 0)
    assert set(got.predictor) <= {
        "stddev",
        "regression",
        "weighted_avg",
        "weighted_median",
        "fallback_median",
    }
    assert np.all(got.support >= 1)
    assert apq.k_ in (1, 5, 10, 25) and apq.chain_ in ("spec", "median") and "aae_s" in apq.tuning_


def test_apq_falls_back_to_median_when_history_is_short(trace):
    ctx = context(trace, 100)
    got = APQ(k=1, spread_threshold=np.inf).fit(ctx).predict_rows(np.array([5, 20]))
    assert list(got.predictor) == ["fallback_median", "fallback_median"]
    a = ctx.state.arrays
    started = [j for j in range(20) if a.present[j] and a.start[j] <= a.submit[20]]
    cls = pred.size_class(a.procs, (4, 16, 64))
    same_class = [j for j in started if cls[j] == cls[20]]
    assert len(same_class) > 0 and got.support[1] == len(same_class)
    assert got.wait_s[1] == np.median((a.start - a.submit)[same_class])


def test_apq_is_deterministic(trace):
    ctx = context(trace, 300)
    first = APQ(history_size=400, tune_targets=50).fit(ctx).predict_rows(np.arange(400, 700, 13))
    second = APQ(history_size=400, tune_targets=50).fit(ctx).predict_rows(np.arange(400, 700, 13))
    np.testing.assert_array_equal(first.wait_s, second.wait_s)
    np.testing.assert_array_equal(first.predictor, second.predictor)


@pytest.mark.parametrize("threshold", [np.inf, -np.inf])
def test_later_jobs_cannot_change_an_earlier_prediction(trace, threshold):
    params = dict(history_size=400, k=5, spread_threshold=threshold)
    targets = np.append(np.arange(320, 450, 9), 450)
    base = APQ(**params).fit(context(trace, 300)).predict_rows(targets)
    changed = trace.copy()
    later = changed.index >= 500
    changed.loc[later, "wait_time"] = changed.loc[later, "wait_time"] * 7 + 3
    changed.loc[later, "requested_procs"] = 64
    # Jobs that arrived before row 450 but had not started by its submit time: their wait
    # was not known yet, so making it longer must not matter either.
    lengthen_unknown_waits(changed, 450, 5000)
    got = APQ(**params).fit(context(changed, 300)).predict_rows(targets)
    np.testing.assert_array_equal(got.wait_s, base.wait_s)
    np.testing.assert_array_equal(got.predictor, base.predictor)
    assert not np.array_equal(
        APQ(**params).fit(context(changed, 300)).predict_rows(np.array([520, 560])).wait_s,
        base.wait_s[:2],
    )


def test_a_request_in_a_snapshot_sees_only_the_past(trace):
    ctx = context(trace, 300)
    apq = APQ(history_size=400, k=1, spread_threshold=np.inf).fit(ctx)
    at = float(trace.submit_time.iat[450]) + 1
    job = JobRequest(user=2, group=1, queue=-1, procs=4, req_time_s=1800, submit_s=at)
    one = apq.predict(from_log(trace, at, machine_procs=128), [job])
    changed = trace.copy()
    started_later = changed.submit_time + changed.wait_time > at
    changed.loc[started_later, "wait_time"] += 99999
    again = APQ(history_size=400, k=1, spread_threshold=np.inf).fit(context(changed, 300))
    again = again.predict(from_log(changed, at, machine_procs=128), [job])
    assert one.wait_s.shape == (1,) and one.support[0] >= 1
    assert one.wait_s[0] == again.wait_s[0] and one.predictor[0] == again.predictor[0]


def test_union_histogram_mode_runs_and_differs_only_in_distances(trace):
    ctx = context(trace, 300)
    params = dict(history_size=400, k=1, spread_threshold=-np.inf)
    fixed = APQ(**params).fit(ctx).predict_rows(np.arange(400, 700, 30))
    union = APQ(hist_mode="union", **params).fit(ctx).predict_rows(np.arange(400, 700, 30))
    assert np.all(union.wait_s >= 0) and set(union.extra["mode"]) == {"distributions"}
    assert fixed.wait_s.shape == union.wait_s.shape
