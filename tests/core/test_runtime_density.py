"""The registered density rangeSet: its level comes from the tuning part's second half only."""

from __future__ import annotations

import copy
import pickle

import numpy as np

from predictor.core.runtime import density
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


def test_fitted_weights_come_from_the_tuning_part_and_beat_the_fixed_ones_on_its_likelihood():
    """``fit_weights``: the weights are a point of the simplex fitted on the dev jobs alone
    (the test part's runtimes do not move them), their dev log-likelihood is at least the
    fixed weights', and without the option the fixed weights answer."""
    from predictor.core.runtime.mix_weights import density_at
    from predictor.core.runtime.targets import RuntimeTargets

    jobs = jobs_with_requests(seed=9)
    ctx = build_context(jobs, PROCS, n_tune=N_TUNE)
    fitted = DensityRangeSet(fit_weights=True).fit(ctx)
    w = np.array(fitted.mix_weights())
    assert np.isclose(w.sum(), 1.0) and (w >= 0).all()
    assert fitted.fitted_info()["weights"] == list(fitted.mix_weights())
    assert DensityRangeSet(fit_weights=False).fit(ctx).mix_weights() == (0.4, 0.2, 0.4)
    changed = jobs.sort_values("submit_time", kind="stable").reset_index(drop=True)
    changed.loc[changed.index >= N_TUNE, "run_time"] = 99999.0
    again = DensityRangeSet(fit_weights=True).fit(build_context(changed, PROCS, n_tune=N_TUNE))
    assert again.mix_weights() == fitted.mix_weights()

    import copy

    dev_ctx = copy.copy(ctx)
    dev_ctx.n_tune = N_TUNE // 2
    dev = np.arange(N_TUNE // 2, N_TUNE)
    dev = dev[ctx.run_s[dev] > 0]
    quantile = fitted._quantile().fit(dev_ctx)
    parts = fitted._components(dev_ctx, RuntimeTargets.from_rows(dev_ctx, dev), quantile,
                               (1.0, 1.0, 1.0))  # fmt: skip
    dens = np.array([[0.0 if pc is None else density_at(pc, float(r)) for pc in ps]
                     for (ps, _, _, _), r in zip(parts, ctx.run_s[dev], strict=True)])  # fmt: skip
    reach = dens.sum(axis=1) > 0

    def loglik(v):
        return np.log(dens[reach] @ np.asarray(v)).sum()

    assert loglik(w) >= loglik([0.4, 0.2, 0.4]) - 1e-9


def test_the_kept_edge_orders_change_no_answer_and_are_not_pickled(monkeypatch):
    """Each target's boxes are sorted from the order kept for the same relevant jobs (another
    requested time's, another row's); the ranges are those of a model that kept none."""
    monkeypatch.setattr(density, "HINT_FROM", 2)  # this log's relevant histories are short
    method = DensityRangeSet().fit(build_context(jobs_with_requests(), PROCS, n_tune=N_TUNE))
    ctx = method.history_
    rows = np.arange(N_TUNE, len(ctx.run_s), 3)
    method.predict_rows(rows)  # keeps orders for these rows' relevant jobs
    assert len(method.__dict__["_edge_orders"]) > 0
    ctx.req_time_s[rows] = ctx.req_time_s[rows] * 1.7 + 13  # other requested times
    hinted = method.predict_rows(rows[::-1].copy()).ranges[::-1]
    fresh = copy.copy(method)  # copied without the kept orders
    assert "_edge_orders" not in fresh.__dict__
    assert "_edge_orders" not in pickle.loads(pickle.dumps(method)).__dict__
    for a, b in zip(hinted, fresh.predict_rows(rows).ranges, strict=True):
        assert a.low_s.tobytes() == b.low_s.tobytes() and a.high_s.tobytes() == b.high_s.tobytes()
        assert a.probability.tobytes() == b.probability.tobytes()
