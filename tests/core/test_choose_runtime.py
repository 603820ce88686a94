"""The runtime method chosen per site on its tuning part, at a coverage ceiling."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from predictor.core.runtime.choose import Score, choose_runtime_method, dev_split, pick
from predictor.core.runtime.history import RuntimeContext, build_context
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.runtime.recent import recent_rows, recent_runtime_accuracy
from predictor.core.runtime.registry import make_method
from predictor.core.runtime.types import RuntimePrediction
from tests.conftest import synthetic_log


def test_pick_takes_the_best_success_under_the_ceiling_not_the_best_overall():
    scores = {
        "wide": Score(success=0.95, coverage=0.60),
        "meets": Score(success=0.78, coverage=0.22),
        "narrow": Score(success=0.55, coverage=0.08),
    }
    assert pick(scores, 0.25) == ("meets", "best success at coverage <= 25%")
    assert pick(scores, 0.7)[0] == "wide"


def test_pick_falls_back_to_the_lowest_coverage_when_none_meets_the_ceiling():
    scores = {"a": Score(0.9, 0.5), "b": Score(0.6, 0.3)}
    assert pick(scores, 0.25) == ("b", "lowest coverage (none under 25%)")
    with pytest.raises(ValueError, match="no candidate"):
        pick({})


class _Fixed:
    """A fake method: a range of ``scale`` times the actual runtime around it, or a miss."""

    def __init__(self, scale: float, hit: bool) -> None:
        self.scale, self.hit = scale, hit

    def fit(self, ctx: RuntimeContext) -> _Fixed:
        self.ctx = ctx
        return self

    def predict_rows(self, rows: np.ndarray) -> RuntimePrediction:
        run = self.ctx.run_s[rows]
        mid = run if self.hit else run * 10 + 100
        return RuntimePrediction(
            [RangeSet(np.array([m]), np.array([m * (1 + self.scale) + 1]), np.ones(1)) for m in mid]
        )

    def fitted_info(self) -> dict[str, Any]:
        return {"scale": self.scale}

    def get_params(self) -> dict[str, Any]:
        return {"scale": self.scale, "hit": self.hit}


def test_choose_runtime_method_picks_the_candidate_that_meets_the_ceiling():
    ctx = build_context(synthetic_log(600, seed=2), 128, n_tune=400)
    fakes = {"huge": _Fixed(1e4, True), "tight": _Fixed(0.01, True), "miss": _Fixed(0.01, False)}
    choice = choose_runtime_method(ctx, lambda name, seed: fakes[name], tuple(fakes))
    assert choice.name == "tight"
    assert choice.tuning_success == 1.0 and choice.tuning_coverage <= 0.25
    assert choice.scores["huge"].coverage > 0.25 and choice.scores["miss"].success == 0.0
    assert choice.params == {"scale": 0.01, "hit": True}
    _, rows = dev_split(ctx)
    assert choice.dev_jobs == rows.size and rows.min() >= 200 and rows.max() < 400


def test_choose_runtime_method_runs_the_registered_methods_on_the_tuning_part_only():
    jobs = synthetic_log(500, seed=4)
    ctx = build_context(jobs, 128, n_tune=300)
    first = choose_runtime_method(ctx, make_method, ("rangeset", "baseline"), ceiling=0.5)
    later = jobs.copy()
    later.loc[300:, "run_time"] = 99999.0
    second = choose_runtime_method(
        build_context(later, 128, n_tune=300), make_method, ("rangeset", "baseline"), ceiling=0.5
    )
    assert first == second
    assert first.scores["baseline"].coverage == pytest.approx(1.0)
    assert first.name == "rangeset"
    assert 0.0 <= first.tuning_ece <= 1.0


def test_runtime_auto_answers_with_the_chosen_method_and_names_it():
    ctx = build_context(synthetic_log(500, seed=5), 128, n_tune=300)
    auto = make_method("auto")
    auto.candidates, auto.ceiling = ("rangeset", "baseline"), 0.5
    auto.fit(ctx)
    info = auto.fitted_info()
    assert info["chosen"] == auto.choice_.name and set(info["dev_scores"]) == {
        "rangeset",
        "baseline",
    }
    rows = np.arange(300, 500, 10)
    direct = make_method(info["chosen"]).fit(ctx).predict_rows(rows)
    got = auto.predict_rows(rows)
    np.testing.assert_array_equal(got.length_s, direct.length_s)
    np.testing.assert_array_equal(got.point_s, direct.point_s)


def test_recent_runtime_accuracy_scores_only_jobs_ended_by_the_instant():
    ctx = build_context(synthetic_log(500, seed=6), 128, n_tune=200)
    fit = {n: make_method(n).fit(ctx) for n in ("rangeset", "requested", "baseline")}
    at = float(ctx.submit_s[400])
    rows = recent_rows(ctx, at, n=50)
    assert rows.size == 50 and (ctx.end_s[rows] <= at).all()
    acc = recent_runtime_accuracy(fit["rangeset"], fit["requested"], fit["baseline"], at, n=50)
    run = ctx.run_s[rows]
    assert acc.jobs == 50
    assert acc.success == np.mean(fit["rangeset"].predict_rows(rows).contains(run))
    assert acc.requested_success == np.mean(fit["requested"].predict_rows(rows).contains(run))
    base = fit["baseline"].predict_rows(rows).length_s
    assert acc.coverage == pytest.approx(
        fit["rangeset"].predict_rows(rows).length_s[base > 0].sum() / base[base > 0].sum()
    )
    early = recent_runtime_accuracy(fit["rangeset"], fit["requested"], fit["baseline"], -1.0)
    assert early.jobs == 0 and not early.better_than_requested


def test_the_ends_known_by_an_instant_are_counted_as_over_the_whole_log():
    ctx = build_context(synthetic_log(500, seed=7), 128, n_tune=200)
    ends = ctx.known_end_s
    instants = np.concatenate([ends[::7], ends[::11] - 0.5, [-1.0, ends.max() + 1.0]])
    for t in instants:  # ties at an end included: an end at t is known at t
        assert ctx.ended_by(float(t)) == np.count_nonzero(ends <= t)


def test_runtime_auto_states_calibrated_probabilities_and_keeps_the_chosen_point():
    ctx = build_context(synthetic_log(500, seed=5), 128, n_tune=300)
    plain, calibrated = make_method("auto"), make_method("auto")
    for auto in (plain, calibrated):
        auto.candidates, auto.ceiling = ("rangeset", "baseline"), 0.5
    plain.calibrate = False
    plain.fit(ctx)
    calibrated.fit(ctx)
    rows = np.arange(300, 500, 10)
    a, b = plain.predict_rows(rows), calibrated.predict_rows(rows)
    np.testing.assert_array_equal(a.point_s, b.point_s)
    np.testing.assert_array_equal(a.length_s, b.length_s)
    knots = calibrated.choice_.calibration
    for r, s in zip(a.ranges, b.ranges, strict=True):
        np.testing.assert_allclose(s.probability, np.interp(r.probability, *knots))
        assert s.probability.sum() <= 1.0 + 1e-9
    assert calibrated.fitted_info()["calibrated"] is True
