"""The log's grace past the requested time (``predictor.core.runtime.overrun``) and density's
rangeSets clipped there (``DensityRangeSet(overrun=True)``)."""

from __future__ import annotations

import numpy as np

from predictor.core.runtime.density import DensityRangeSet
from predictor.core.runtime.history import build_context
from predictor.core.runtime.overrun import overrun_grace
from tests.conftest import synthetic_log


def test_the_grace_is_the_99th_percentile_of_the_tuning_parts_overruns():
    run = np.array([100.0, 160.0, 130.0, 50.0, 9999.0, 500.0])
    req = np.array([100.0, 100.0, 100.0, 0.0, 100.0, 100.0])
    # rows 1 and 2 overran by 60 and 30 s; row 4 is past n_tune; row 3 has no request
    assert overrun_grace(run, req, 4) == np.percentile([60.0, 30.0], 99)
    assert overrun_grace(run, req, 1) == 0.0  # no overrun in the tuning part


def _jobs_that_overrun(seed: int = 4):
    """Half the jobs run 40-80 s past their request (a scheduler's kill grace), the others
    end well inside it."""
    jobs = synthetic_log(600, seed=seed)
    rng = np.random.default_rng(seed)
    req = (jobs["run_time"].abs() * 2).round() + 600
    late = rng.random(len(jobs)) < 0.5
    jobs["requested_time"] = req
    jobs.loc[late, "run_time"] = req[late] + rng.uniform(40, 80, late.sum()).round()
    return jobs


def test_with_overrun_ranges_reach_past_the_request_and_hold_jobs_the_clip_always_missed():
    ctx = build_context(_jobs_that_overrun(), 128, n_tune=300)
    rows = np.arange(300, len(ctx.run_s))
    rows = rows[ctx.run_s[rows] > 0]
    plain = DensityRangeSet(overrun=False).fit(ctx)
    late = DensityRangeSet(grace_quantile=99.0).fit(ctx)  # the 99th percentile of the overruns
    assert 40.0 < late.grace_s_ <= 80.0 and late.fitted_info()["grace_s"] == late.grace_s_
    over = ctx.run_s[rows] > ctx.req_time_s[rows]
    p_plain, p_late = plain.predict_rows(rows), late.predict_rows(rows)
    high_plain = np.array([r.high_s.max() for r in p_plain.ranges])
    high_late = np.array([r.high_s.max() for r in p_late.ranges])
    assert (high_plain <= ctx.req_time_s[rows] + 1e-9).all()  # the seed's clip
    assert (high_late <= ctx.req_time_s[rows] + late.grace_s_ + 1e-9).all()
    assert not p_plain.contains(ctx.run_s[rows])[over].any()  # certain misses before
    assert p_late.contains(ctx.run_s[rows])[over].mean() > 0.5


def test_by_default_the_grace_is_the_median_overrun_of_the_tuning_part():
    jobs = _jobs_that_overrun(seed=7)
    ctx = build_context(jobs, 128, n_tune=300)
    run, req = ctx.run_s[:300], ctx.req_time_s[:300]
    over = (req > 0) & (run > req)
    method = DensityRangeSet().fit(ctx)
    assert method.overrun and method.grace_s_ == np.median(run[over] - req[over])
