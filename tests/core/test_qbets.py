"""QBETS: binomial bound, minimum history, change-point trimming, groups, no look-ahead."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from predictor.core.state.request import JobRequest
from predictor.core.state.snapshot import from_log
from predictor.core.wait.qbets import QBETS, bound_indices, min_history, miss_run_to_trim
from tests.core.wait_fakes import make_ctx, make_jobs


def test_minimum_history_is_59_for_q_and_c_of_095():
    assert min_history(0.95, 0.95) == 59
    assert min_history(0.5, 0.95) == 5


def test_two_misses_trigger_trimming_at_q_095():
    assert miss_run_to_trim(0.95) == 2  # 0.05**2 = 0.0025 < 0.01 <= 0.05
    assert miss_run_to_trim(0.5) == 7  # 0.5**7 < 0.01 <= 0.5**6


@pytest.mark.parametrize("n", [59, 60, 100, 500, 5000])
def test_bound_index_is_smallest_k_with_binomial_cdf_at_least_c(n):
    k = bound_indices(n, 0.95, 0.95)[n] + 1  # 1-based k-th smallest
    assert binom.cdf(k - 1, n, 0.95) >= 0.95
    assert binom.cdf(k - 2, n, 0.95) < 0.95


def _constant_group_trace(n=400, wait=500.0):
    jobs = make_jobs(n)
    jobs["requested_procs"] = jobs["allocated_procs"] = 2
    jobs["wait_time"] = wait
    return jobs


def test_bound_and_point_equal_a_constant_history_wait():
    jobs = _constant_group_trace()
    pred = QBETS().fit(make_ctx(jobs)).predict_rows(np.array([300, 399]))
    assert np.all(pred.upper_s == 500.0) and np.all(pred.wait_s == 500.0)
    assert list(pred.predictor) == ["group", "group"]


def test_short_group_history_borrows_the_pooled_history():
    jobs = make_jobs(300)
    jobs.loc[:, ["requested_procs", "allocated_procs"]] = 1
    jobs.loc[299, ["requested_procs", "allocated_procs"]] = 100  # the only 65+ job
    ctx = make_ctx(jobs)
    pred = QBETS().fit(ctx).predict_rows(np.array([299, 10]))
    assert pred.predictor[0] == "pooled"
    assert pred.predictor[1] == "pooled_max"  # fewer than 59 known jobs at row 10


def test_change_point_trims_history_so_bound_follows_a_jump():
    jobs = _constant_group_trace(n=1100, wait=10.0)
    jobs.loc[1000:, "wait_time"] = 10_000.0
    ctx = make_ctx(jobs)
    pred = QBETS().fit(ctx).predict_rows(np.array([1099]))
    # without trimming, 1000 old waits of 10 s would hold the 0.95 bound at 10 s
    assert pred.upper_s[0] == 10_000.0
    assert pred.support[0] < 200


def test_bound_covers_about_q_of_stationary_waits():
    jobs = make_jobs(3000, seed=3)
    ctx = make_ctx(jobs)
    targets = np.arange(600, 3000)
    pred = QBETS().fit(ctx).predict_rows(targets)
    coverage = np.mean(jobs["wait_time"].to_numpy()[targets] <= pred.upper_s)
    assert coverage > 0.9


def test_changing_a_later_job_leaves_earlier_predictions_unchanged():
    jobs = make_jobs(800)
    targets = np.arange(200, 500)
    before = QBETS().fit(make_ctx(jobs)).predict_rows(targets)
    later = jobs.copy()
    later.loc[500:, "wait_time"] *= 50
    later.loc[500:, "requested_procs"] = 1
    after = QBETS().fit(make_ctx(later)).predict_rows(targets)
    np.testing.assert_array_equal(before.upper_s, after.upper_s)
    np.testing.assert_array_equal(before.wait_s, after.wait_s)


def test_a_target_never_sees_its_own_wait():
    jobs = _constant_group_trace(n=200, wait=0.0)
    jobs.loc[199, "wait_time"] = 0.0
    jobs.loc[199, "submit_time"] = jobs.loc[198, "submit_time"]  # tie at the same instant
    ctx = make_ctx(jobs)
    qb = QBETS().fit(ctx)
    assert qb.predict_rows(np.array([199])).support[0] == 199  # rows 0..198, not itself


def test_a_request_after_the_log_sees_the_whole_known_history():
    jobs = make_jobs(600)
    ctx = make_ctx(jobs)
    qb = QBETS().fit(ctx)
    at = float(jobs["submit_time"].iloc[-1]) + 10 * 86400  # everything has started by then
    request = JobRequest(user=1, procs=8, req_time_s=600, submit_s=at)
    single = qb.predict(from_log(jobs, at, machine_procs=128), [request])
    sizes = jobs["requested_procs"].to_numpy()
    waits = np.sort(jobs["wait_time"].to_numpy()[(sizes >= 5) & (sizes <= 16)])
    assert single.support[0] <= waits.size
    assert single.upper_s[0] >= single.wait_s[0] >= 0


def test_a_batch_answers_each_request_as_if_asked_alone():
    """Each size group present in a batch is answered from its own and the pooled state;
    the groups a batch leaves out are not read, and a request's answer does not depend on
    which others share its batch."""
    jobs = make_jobs(600)
    qb = QBETS().fit(make_ctx(jobs))
    at = float(jobs["submit_time"].iloc[400])
    snap = from_log(jobs, at, machine_procs=128, rows=400)
    batch = [JobRequest(user=1, procs=p, req_time_s=600, submit_s=at) for p in (1, 8, 32, 100, 3)]
    together = qb.predict(snap, batch)
    for k, request in enumerate(batch):
        alone = qb.predict(snap, [request])
        assert alone.upper_s[0] == together.upper_s[k] and alone.wait_s[0] == together.wait_s[k]
        assert alone.support[0] == together.support[k]
        assert alone.predictor[0] == together.predictor[k]
    assert together.support.min() > 0
