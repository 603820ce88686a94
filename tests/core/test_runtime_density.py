"""The registered density rangeSet: its level comes from the tuning part's second half only."""

from __future__ import annotations

import numpy as np

from predictor.core.runtime.density import DensityRangeSet
from predictor.core.runtime.history import build_context
from tests.conftest import synthetic_log

N_TUNE, PROCS = 200, 128


def jobs_with_requests(seed: int = 5):
    jobs = synthetic_log(500, seed=seed)
    jobs["requested_time"] = (jobs["run_time"].abs() * 2).round() + 60
    return jobs


def test_the_level_ignores_the_test_part_and_comes_from_the_grid_or_its_bisection():
    jobs = jobs_with_requests()
    a = DensityRangeSet().fit(build_context(jobs, PROCS, n_tune=N_TUNE))
    changed = jobs.sort_values("submit_time", kind="stable").reset_index(drop=True)
    changed.loc[changed.index >= N_TUNE, "run_time"] = 99999.0
    b = DensityRangeSet().fit(build_context(changed, PROCS, n_tune=N_TUNE))
    assert a.lam_ == b.lam_
    steps = (np.log10(a.lam_) - a.log_lam_grid[0]) / (0.25 / 2**a.refine)
    assert np.isclose(steps, np.round(steps))
    assert a.fitted_info()["dev_targets"] > 0


def test_ranges_are_disjoint_within_the_request_with_probabilities_summing_to_one():
    method = DensityRangeSet().fit(build_context(jobs_with_requests(), PROCS, n_tune=N_TUNE))
    ctx = method.history_
    rows = np.arange(N_TUNE, len(ctx.run_s), 7)
    for r, req in zip(method.predict_rows(rows).ranges, ctx.req_time_s[rows], strict=True):
        assert np.isclose(r.probability.sum(), 1.0)
        assert (r.low_s >= 1.0).all() and (r.high_s <= max(req, 1.0) + 1e-9).all()
        assert (r.low_s[1:] >= r.high_s[:-1]).all()


def test_a_lower_level_never_gives_shorter_ranges():
    ctx = build_context(jobs_with_requests(), PROCS, n_tune=N_TUNE)
    rows = np.arange(N_TUNE, len(ctx.run_s), 11)
    fixed = {"target_coverage": None}
    high = DensityRangeSet(log_lam_grid=(-3.0,), **fixed).fit(ctx).predict_rows(rows).length_s
    low = DensityRangeSet(log_lam_grid=(-6.0,), **fixed).fit(ctx).predict_rows(rows).length_s
    assert (low >= high - 1e-9).all() and low.sum() > high.sum()


def test_bisection_spends_the_allowed_coverage_on_the_tuning_part_and_no_more():
    ctx = build_context(jobs_with_requests(seed=8), PROCS, n_tune=N_TUNE)
    coarse = DensityRangeSet(refine=0, max_coverage=0.3).fit(ctx).fitted_info()
    fine = DensityRangeSet(refine=4, max_coverage=0.3).fit(ctx).fitted_info()
    assert coarse["dev_coverage"] <= fine["dev_coverage"] <= 0.3
    assert fine["dev_success"] >= coarse["dev_success"]
