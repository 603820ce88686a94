"""The wait harness: target selection, same jobs for every method, baselines, GBM, leakage."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.baselines import RecentMedian, ZeroWait
from predictor.core.wait.evaluate import evaluate, evaluate_trace, select_targets
from predictor.core.wait.gbm import WaitGBM
from predictor.core.wait.history import KnownHistory, usable_mask
from predictor.core.wait.registry import FACTORIES, make_methods, parse_methods
from tests.core.wait_fakes import make_ctx, make_jobs


def _with_oddities():
    jobs = make_jobs(100)
    jobs.loc[50, "wait_time"] = -1  # unknown wait
    jobs.loc[60, "run_time"] = -1  # cancelled in the queue
    jobs.loc[70, "allocated_procs"] = 0
    jobs.loc[80, "wait_time"] = -1
    jobs.loc[80, "run_time"] = -1  # counted once, under its first reason
    jobs.loc[10, "run_time"] = -1  # in the tuning part: not counted
    return jobs


def test_targets_exclude_jobs_that_never_ran_and_say_why():
    sel = select_targets(_with_oddities(), tune_fraction=0.2)
    assert sel.n_tune == 20
    expected = {"unknown_wait": 2, "never_ran_no_runtime": 1, "never_ran_zero_procs": 1}
    assert sel.excluded == {"no_submit_time": 0, **expected}
    assert sel.targets.size == sel.test_usable == 76
    assert not {50, 60, 70, 80} & set(sel.targets.tolist())
    assert sel.targets.min() >= 20


def test_limit_spreads_targets_evenly_over_the_test_part():
    sel = select_targets(make_jobs(1000), tune_fraction=0.2, limit=5)
    np.testing.assert_array_equal(sel.targets, [200, 400, 600, 799, 999])
    assert sel.test_usable == 800


def test_bad_tune_fraction_or_limit_is_refused():
    with pytest.raises(ValueError, match="tune_fraction"):
        select_targets(make_jobs(10), tune_fraction=1.0)
    with pytest.raises(ValueError, match="limit"):
        select_targets(make_jobs(10), tune_fraction=0.2, limit=0)


def test_history_prefix_breaks_ties_by_row():
    jobs = make_jobs(5)
    jobs["submit_time"] = [0.0, 10.0, 10.0, 10.0, 20.0]
    jobs["wait_time"] = [10.0, 0.0, 0.0, 0.0, 0.0]
    hist = KnownHistory.from_jobs(jobs)
    # row 2 at t=10 knows row 0 (started at 10) and row 1 (same instant, earlier row)
    np.testing.assert_array_equal(hist.prefix(np.array([10.0, 10.0]), np.array([2, 1])), [2, 1])


def test_every_method_scores_the_same_targets_with_a_ci_against_apq():
    jobs = make_jobs(600)
    ctx = make_ctx(jobs)
    sel = select_targets(jobs, 0.2, limit=100)
    methods = {"apq": RecentMedian(), "zero": ZeroWait(), "qbets": make_methods(["qbets"])["qbets"]}
    out = evaluate(ctx, sel, methods, n_boot=50)
    assert {r["jobs"] for r in out.results.values()} == {100}
    assert "ci_vs_apq" in out.results["zero"] and "ci_vs_apq" not in out.results["apq"]
    mean_wait = jobs["wait_time"].to_numpy()[sel.targets].mean()
    assert out.results["zero"]["aae_s"] == pytest.approx(mean_wait)
    assert "upper_coverage" in out.results["qbets"]


def test_evaluate_trace_refuses_a_trace_without_known_waits():
    jobs = make_jobs(50)
    jobs["wait_time"] = -1.0
    with pytest.raises(ValueError, match="no test targets"):
        evaluate_trace(jobs, 128, {"zero": ZeroWait()})


def test_registry_knows_every_method_and_rejects_unknown_names():
    assert set(FACTORIES) == {"apq", "qbets", "ibl", "median", "gbm", "zero", "sim", "auto"}
    assert parse_methods("qbets, ibl,qbets") == ["qbets", "ibl"]
    with pytest.raises(ValueError, match="unknown methods"):
        parse_methods("qbets,oracle")


def test_recent_median_answers_the_median_of_the_size_class():
    jobs = make_jobs(300)
    jobs["requested_procs"] = jobs["allocated_procs"] = 1
    jobs["wait_time"] = np.arange(300.0) % 3  # 0,1,2 repeating -> median 1
    ctx = make_ctx(jobs)
    pred = RecentMedian(window=99).fit(ctx).predict_rows(np.array([250]))
    assert pred.wait_s[0] == 1.0 and pred.predictor[0] == "class_median"


@pytest.mark.parametrize("name", ["median", "gbm"])
def test_changing_a_later_job_leaves_earlier_predictions_unchanged(name):
    jobs = make_jobs(900)
    targets = np.arange(200, 500, 7)
    method = FACTORIES[name](0)
    if name == "gbm":
        method = WaitGBM(retrain_every=100, max_iter=20)
    before = method.fit(make_ctx(jobs)).predict_rows(targets).wait_s
    later = jobs.copy()
    later.loc[500:, "wait_time"] = 1e6
    after = method.fit(make_ctx(later)).predict_rows(targets).wait_s
    np.testing.assert_array_equal(before, after)
    assert usable_mask(later)[0].all()


def test_gbm_retrains_on_a_schedule_and_beats_zero_on_learnable_waits():
    jobs = make_jobs(1500, seed=2)
    ctx = make_ctx(jobs, n_tune=400)
    targets = np.arange(400, 1500)
    actual = jobs["wait_time"].to_numpy()[targets]
    pred = WaitGBM(retrain_every=500, max_iter=50).fit(ctx).predict_rows(targets).wait_s
    assert np.mean(np.abs(pred - actual)) < np.mean(actual)


def test_simulated_start_ignores_jobs_submitted_later():
    jobs = make_jobs(400)
    targets = np.arange(100, 250, 5)
    sim = FACTORIES["sim"](0)
    before = sim.fit(make_ctx(jobs)).predict_rows(targets).wait_s
    later = jobs.copy()
    later.loc[250:, "wait_time"] = 1e6
    later.loc[250:, "requested_procs"] = later.loc[250:, "allocated_procs"] = 128
    after = sim.fit(make_ctx(later)).predict_rows(targets).wait_s
    np.testing.assert_array_equal(before, after)
    assert np.all(before >= 0)
