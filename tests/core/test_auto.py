"""``auto``: experts fitted and scored online, the state fallback, and the leakage guard."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from predictor.core.state.sweep import compute_state
from predictor.core.wait.auto import AutoWait, outside_seen, scored_rows
from predictor.core.wait.evaluate import evaluate_trace
from predictor.core.wait.registry import make_method
from predictor.core.wait.types import WaitContext
from tests.core.wait_fakes import make_jobs


def test_states_outside_the_seen_ones_are_flagged():
    feats = np.array([[10, 50], [200, 50], [10, 900]], dtype=float)
    out = outside_seen(feats, np.array([183.0, 800.0]))
    np.testing.assert_array_equal(out, [False, True, True])


def test_scored_rows_keep_at_most_max_scored_usable_rows_after_the_tuning_part():
    usable = np.ones(100, dtype=bool)
    usable[50] = False
    np.testing.assert_array_equal(scored_rows(usable, 40, 100), np.r_[40:50, 51:100])
    rows = scored_rows(usable, 40, 20)
    assert rows.size <= 20 and rows[0] == 40 and 50 not in rows
    np.testing.assert_array_equal(rows[:5], [40, 43, 46, 49, 53])  # every 3rd usable row


def _ctx(jobs: pd.DataFrame, n_tune: int) -> WaitContext:
    return WaitContext(jobs, compute_state(jobs), n_tune, 128)


def _auto(rule: str = "adahedge") -> AutoWait:
    return AutoWait(
        candidates=("median", "gbm", "zero"), safe="median", round_size=5, min_known=10,
        n_validation=80, make=make_method, rule=rule,
    )  # fmt: skip


@pytest.mark.parametrize("rule", ["adahedge", "adahedge_grad", "adahedge_stacked"])
def test_auto_names_what_answered_and_is_causal(rule):
    jobs = make_jobs(900, seed=4)
    targets = np.arange(300, 700, 3)
    before = _auto(rule).fit(_ctx(jobs, 200)).predict_rows(targets)
    assert set(before.predictor) <= {"mix", "guard:zero"} | {
        f"fallback:{o}" for o in ("mix", "median", "gbm", "zero")
    }
    assert "mix" in set(before.predictor)
    np.testing.assert_allclose(
        before.extra["weight_median"] + before.extra["weight_gbm"] + before.extra["weight_zero"],
        1.0,
    )
    later = jobs.copy()
    later.loc[700:, "wait_time"] = 1e6
    after = _auto(rule).fit(_ctx(later, 200)).predict_rows(targets)
    np.testing.assert_array_equal(before.wait_s, after.wait_s)
    np.testing.assert_array_equal(before.predictor, after.predictor)


def test_auto_mix_lies_between_its_candidates():
    jobs = make_jobs(900, seed=5)
    pred = _auto().fit(_ctx(jobs, 200)).predict_rows(np.arange(400, 800, 7))
    cands = np.stack([pred.extra[f"candidate_{n}_s"] for n in ("median", "gbm", "zero")])
    mix = pred.predictor == "mix"
    assert np.all(pred.wait_s[mix] <= cands[:, mix].max(axis=0) + 1e-9)
    assert np.all(pred.wait_s >= 0)


def test_auto_refuses_a_safe_method_outside_its_candidates():
    with pytest.raises(ValueError, match="not among the candidates"):
        AutoWait(candidates=("zero",), safe="gbm", make=make_method).fit(_ctx(make_jobs(100), 20))


def test_auto_needs_zero_among_its_candidates():
    with pytest.raises(ValueError, match="'zero' is not among"):
        AutoWait(candidates=("median",), safe="median", make=make_method).fit(
            _ctx(make_jobs(100), 20)
        )


def test_the_evaluation_scores_autos_candidates_as_if_run_alone():
    jobs = make_jobs(700, seed=6)
    methods = {
        "auto": AutoWait(
            candidates=("median", "zero"), safe="median", n_validation=50, make=make_method
        ),
        "median": make_method("median"),
        "zero": make_method("zero"),
    }
    out = evaluate_trace(jobs, 128, methods, tune_fraction=0.3, limit=150).results
    inner = out["auto"]["candidates_aae_s"]
    assert inner["median"] == pytest.approx(out["median"]["aae_s"])
    assert inner["zero"] == pytest.approx(out["zero"]["aae_s"])
    assert "candidates_aae_s" not in out["median"]
    assert out["auto"]["rule_choice"] == methods["auto"].rule_choice_  # which rule, and why
    assert out["auto"]["rule_choice"]["rule"] in ("adahedge", "adahedge_stacked")
    assert "rule_choice" not in out["median"]


def test_a_snapshot_asks_only_the_experts_its_answers_read():
    """On a snapshot's requests an expert whose weight is below ``skip_below`` everywhere is
    not asked: its candidate column says NaN ("not asked"), the answers move by less than
    ``skip_below`` times its prediction, and ``skip_below=0`` asks every expert. Log rows
    (evaluations, which score every expert) always ask all."""
    from predictor.core.state.request import RequestBatch
    from predictor.core.state.snapshot import from_log

    jobs = make_jobs(900, seed=4)
    auto = _auto().fit(_ctx(jobs, 200))
    names = ("median", "gbm", "zero")
    skipped = 0
    for i in range(600, 800, 50):
        snap = from_log(jobs, float(jobs["submit_time"].iat[i]), machine_procs=128, rows=i)
        batch = RequestBatch.from_jobs(jobs.iloc[[i]])
        auto.skip_below = 0.0
        every = auto.predict(snap, batch)
        auto.skip_below = 1e-12
        some = auto.predict(snap, batch)
        unasked = [n for n in names if np.isnan(some.extra[f"candidate_{n}_s"]).all()]
        skipped += len(unasked)
        assert all(np.isfinite(every.extra[f"candidate_{n}_s"]).all() for n in names)
        bound = sum(1e-12 * every.extra[f"candidate_{n}_s"] for n in unasked)
        assert np.all(np.abs(every.wait_s - some.wait_s) <= bound + 4 * np.spacing(every.wait_s))
    assert skipped > 0  # zero's weight falls below 1e-12 on this log
    rows = auto.predict_rows(np.arange(600, 800, 50))
    assert all(np.isfinite(rows.extra[f"candidate_{n}_s"]).all() for n in names)


class _Counting:
    """Counts the log rows a wrapped expert is asked for."""

    def __init__(self, method, asked: list[int]) -> None:
        self.method, self.asked = method, asked

    def predict_rows(self, rows, progress=None):
        self.asked.extend(np.asarray(rows).tolist())
        return self.method.predict_rows(rows, progress=progress)

    def __getattr__(self, name):
        return getattr(self.method, name)


def _lending_methods(seed: int = 0) -> dict:
    return {
        "auto": AutoWait(
            candidates=("median", "gbm", "zero"), safe="median", round_size=5, min_known=10,
            n_validation=80, max_scored=60, make=make_method, random_state=seed,
        ),
        "median": make_method("median", seed),
        "gbm": make_method("gbm", seed),
        "zero": make_method("zero", seed),
    }  # fmt: skip


def test_auto_beside_its_experts_reuses_their_answers_and_answers_the_same():
    """An evaluation of ``auto`` with its experts lends it their row answers (the same
    class and parameters fitted on the same context): ``auto``'s answers, weights and the
    experts' columns equal ``auto`` evaluated alone, to the bit, in any order of methods."""
    jobs = make_jobs(900, seed=7)
    alone = evaluate_trace(jobs, 128, {"auto": _lending_methods()["auto"]}, limit=200)
    methods = _lending_methods()
    with_experts = evaluate_trace(jobs, 128, methods, limit=200)
    assert with_experts.results["auto"]["reused_answers_of"] == ["median", "gbm", "zero"]
    assert alone.results["auto"]["reused_answers_of"] == []
    assert with_experts.results["auto"]["reused_fits_of"] == ["median", "gbm", "zero"]
    assert alone.results["auto"]["reused_fits_of"] == []
    for name in ("median", "gbm", "zero"):  # the evaluation's own fitted experts
        assert methods["auto"].methods_[name] is methods[name]
    assert list(with_experts.results) == ["auto", "median", "gbm", "zero"]  # the order asked
    a, b = alone.predictions["auto"], with_experts.predictions["auto"]
    np.testing.assert_array_equal(a.wait_s, b.wait_s)
    np.testing.assert_array_equal(a.predictor, b.predictor)
    assert a.extra.keys() == b.extra.keys()
    for key in a.extra:
        np.testing.assert_array_equal(a.extra[key], b.extra[key])
    assert with_experts.results["auto"]["aae_s"] == alone.results["auto"]["aae_s"]


def test_only_the_very_expert_is_adopted_and_offers_are_dropped():
    """``adopt`` takes an offered method only when it is the expert ``fit`` would build
    (class, parameters, the same context object); other offers are fitted afresh, and no
    offer outlives the fit or is pickled."""
    jobs = make_jobs(900, seed=8)
    ctx = _ctx(jobs, 200)
    auto = _lending_methods()["auto"]
    median = make_method("median").fit(ctx)
    gbm_other_seed = make_method("gbm", 1).fit(ctx)
    zero_other_ctx = make_method("zero").fit(_ctx(jobs, 200))
    for name, method in (("median", median), ("gbm", gbm_other_seed), ("zero", zero_other_ctx)):
        auto.adopt(name, method)
    auto.fit(ctx)
    assert auto.adopted_ == ["median"]
    assert auto.methods_["median"] is median
    assert auto.methods_["gbm"] is not gbm_other_seed
    assert auto.methods_["zero"] is not zero_other_ctx
    assert "_offered" not in auto.__dict__
    auto.adopt("median", median)
    assert "_offered" not in pickle.loads(pickle.dumps(auto)).__dict__


def test_lent_rows_are_not_asked_again_and_rows_not_lent_are():
    jobs = make_jobs(900, seed=8)
    ctx = _ctx(jobs, 200)
    median = make_method("median").fit(ctx)
    auto = _lending_methods()["auto"].fit(ctx)
    assert auto.same_expert("median", median)
    assert not auto.same_expert("median", make_method("median").fit(_ctx(jobs, 200)))  # other ctx
    assert not auto.same_expert("gbm", make_method("gbm", 1).fit(ctx))  # other parameters
    asked: list[int] = []
    own = auto.methods_["median"]
    auto.methods_["median"] = _Counting(own, asked)
    lent_rows = np.arange(300, 900)
    auto.lend("median", lent_rows, median.predict_rows(lent_rows).wait_s)
    rows = np.arange(250, 600, 5)
    got = auto.predict_rows(rows)
    assert asked and set(asked) <= set(range(200, 300))  # the pool's and targets' rows not lent
    fresh = _lending_methods()["auto"].fit(ctx).predict_rows(rows)
    np.testing.assert_array_equal(got.wait_s, fresh.wait_s)
    np.testing.assert_array_equal(
        got.extra["candidate_median_s"], fresh.extra["candidate_median_s"]
    )
    auto.methods_["median"] = own
    assert pickle.loads(pickle.dumps(auto)).lent() == ()  # lent answers are not stored


def test_the_rule_is_chosen_per_site_by_its_validation_error_and_answers_as_that_rule():
    """``rule="choose"``: each candidate rule answers the validation jobs (tuning part only);
    the lowest AAE wins, the first at a tie; the fitted ``auto`` then answers exactly as
    ``auto`` fitted with the chosen rule fixed."""
    jobs = make_jobs(900, seed=4)
    targets = np.arange(300, 700, 3)
    among = ("adahedge", "adahedge_stacked", "adahedge_grad")
    chosen = _auto("choose")
    chosen.rule_among = among
    chosen.fit(_ctx(jobs, 200))
    record = chosen.rule_choice_
    assert record is not None and set(record["aae_s"]) == set(among)
    rows = chosen.validation_rows_
    wait = jobs["wait_time"].to_numpy(dtype=float)[rows]
    for rule in among:  # each AAE is that rule's own, recomputed from a fixed-rule fit
        fixed = _auto(rule).fit(_ctx(jobs, 200))
        sel = fixed._build(rows[:0])
        got = sel.select(fixed.validation_pred_, rows, jobs["submit_time"].to_numpy()[rows],
                         fixed.row_outside_[rows])  # fmt: skip
        assert record["aae_s"][rule] == pytest.approx(np.abs(got.wait_s - wait).mean(), rel=0)
    best = min(among, key=lambda r: (record["aae_s"][r], among.index(r)))
    assert chosen.chosen_rule() == best == record["rule"]
    mine = chosen.predict_rows(targets)
    theirs = _auto(best).fit(_ctx(jobs, 200)).predict_rows(targets)
    np.testing.assert_array_equal(mine.wait_s, theirs.wait_s)
    np.testing.assert_array_equal(mine.predictor, theirs.predictor)
    tie = _auto("choose")
    tie.rule_among = ("adahedge_grad", "adahedge_grad")
    assert tie.fit(_ctx(jobs, 200)).chosen_rule() == "adahedge_grad"
    old = pickle.loads(pickle.dumps(_auto("adahedge").fit(_ctx(jobs, 200))))
    del old.__dict__["rule_among"]  # pickled before the choice existed
    again = pickle.loads(pickle.dumps(old))
    assert again.chosen_rule() == "adahedge" and again.rule_choice_ is None
