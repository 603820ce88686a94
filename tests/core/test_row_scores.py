"""The runtime accuracy's per-row terms kept across instants
(``predictor.core.runtime.row_scores``, issue 18): the same figures as scoring each instant's
jobs afresh, for every registered runtime method, with each row answered once."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.accuracy import recent_order
from predictor.core.answer_accuracy import (
    kept_runtime_accuracy_at,
    runtime_accuracy_at,
    runtime_row_scores,
)
from predictor.core.runtime.history import build_context
from predictor.core.runtime.recent import recent_rows
from predictor.core.runtime.registry import FACTORIES as RUNTIME
from predictor.core.runtime.registry import make_method
from tests.core.test_contract import N_TUNE, PROCS, contract_log, fitted_on_log


@pytest.mark.parametrize("name", list(RUNTIME))
def test_kept_terms_give_each_instants_figures_exactly(name):
    method = fitted_on_log("runtime", name)
    ctx = method.history_
    scores = runtime_row_scores(method, ctx)
    ats = ctx.submit_s[np.arange(N_TUNE + 20, len(ctx.submit_s), 37)]
    for at in [*ats, *ats[::-1]]:  # forwards, then back over instants already scored
        fresh = runtime_accuracy_at(method, ctx, float(at), 40)
        assert kept_runtime_accuracy_at(scores, float(at), 40) == fresh
    asked = np.unique(np.concatenate([recent_rows(ctx, float(at), 40) for at in ats]))
    assert scores.predicted == asked.size  # each row once, however often asked


@pytest.mark.parametrize("name", ["rangeset", "density"])
def test_the_terms_are_the_three_methods_answers(name):
    method = fitted_on_log("runtime", name)
    ctx = method.history_
    scores = runtime_row_scores(method, ctx)
    rows = recent_rows(ctx, float(ctx.submit_s[-1]), 60)
    terms, run = scores.terms(rows), ctx.run_s[rows]
    got, req = method.predict_rows(rows), scores.requested.predict_rows(rows)
    base = make_method("baseline").fit(ctx).predict_rows(rows)
    expected = [got.contains(run), got.length_s, req.contains(run), req.length_s, base.length_s]
    for column, want in zip(terms.T, expected, strict=True):
        np.testing.assert_array_equal(column, np.asarray(want, dtype=float))
    assert 0 < terms[:, 0].sum() < rows.size  # some held, some did not: both counted
    assert not np.array_equal(terms[:, 1], terms[:, 3])  # the method's ranges, not requested


def test_a_later_instant_scores_only_the_jobs_ended_since():
    method = fitted_on_log("runtime", "rangeset")
    ctx = method.history_
    scores = runtime_row_scores(method, ctx)
    a, b = float(ctx.submit_s[300]), float(ctx.submit_s[310])
    kept_runtime_accuracy_at(scores, a, 40)
    assert scores.predicted == 40
    kept_runtime_accuracy_at(scores, b, 40)
    fresh = np.setdiff1d(recent_rows(ctx, b, 40), recent_rows(ctx, a, 40))
    assert 0 < fresh.size < 40 and scores.predicted == 40 + fresh.size


def test_recent_rows_by_bisection_are_recent_order_over_every_end():
    jobs = contract_log()
    jobs.loc[jobs.index[150:160], "run_time"] = 0.0  # no runtime: never scored
    cols = ["submit_time", "wait_time", "run_time"]
    jobs.loc[jobs.index[200:205], cols] = jobs.loc[jobs.index[199], cols].to_numpy()
    ctx = build_context(jobs, PROCS, n_tune=N_TUNE)
    end = np.where(ctx.run_s > 0, ctx.end_s, np.inf)
    assert np.unique(end[np.isfinite(end)], return_counts=True)[1].max() >= 6  # one end, 6 jobs
    for at in [-1.0, *np.quantile(end[np.isfinite(end)], [0, 0.1, 0.5, 0.9, 1]), 1e12]:
        for n in (1, 7, 40, 10_000):
            np.testing.assert_array_equal(recent_rows(ctx, at, n), recent_order(end, at, n))
    with pytest.raises(ValueError, match="n must be"):
        recent_rows(ctx, 0.0, 0)
