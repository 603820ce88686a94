"""ML-Poly and the rules on linearised losses (predictor.core.wait.hedge, hedge_gradient)."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.hedge import adahedge, ml_poly
from predictor.core.wait.hedge_gradient import (
    adahedge_gradient,
    linearised_losses,
    ml_poly_gradient,
)
from predictor.core.wait.selection import RULES, HedgeSelector, Pool
from predictor.core.wait.waiting import WaitingTangent


def _opposite_sides(rounds: int = 40, size: int = 25, seed: int = 0):
    """Two experts erring on opposite sides of the truth (600 s over, 900 s under), a third
    far off: the mix 0.6 / 0.4 of the first two is exact, the best single expert errs 600 s."""
    rng = np.random.default_rng(seed)
    wait = rng.uniform(100.0, 5000.0, (rounds, size))
    pred = np.stack([wait + 600.0, wait - 900.0, wait + 5000.0])
    return pred, wait


def _mix_aae(weights: np.ndarray, pred: np.ndarray, wait: np.ndarray) -> float:
    """AAE of the mix answering each round with the weights given the rounds before it."""
    mix = np.einsum("rm,mrj->rj", weights[:-1], pred)
    return float(np.abs(mix - wait).mean())


def test_the_linearised_loss_of_the_mix_is_its_actual_loss_and_bounds_each_experts_from_below():
    pred, wait = _opposite_sides(rounds=1)
    w = np.array([0.2, 0.5, 0.3])
    lin = linearised_losses(w, pred[:, 0], wait[0])
    assert w @ lin == pytest.approx(np.abs(w @ pred[:, 0] - wait[0]).mean())
    assert np.all(lin <= np.abs(pred[:, 0] - wait[0]).mean(axis=1) + 1e-9)


@pytest.mark.parametrize("rule", [adahedge_gradient, ml_poly_gradient])
def test_on_linearised_losses_a_rule_finds_the_mix_better_than_every_expert(rule):
    pred, wait = _opposite_sides()
    weights = rule(pred, wait)
    assert weights.shape == (41, 3)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    late = _mix_aae(weights[20:], pred[:, 20:], wait[20:])
    # the best single expert errs 600 s a job; the mix of experts on both sides errs less
    assert late < 0.25 * 600.0
    # on the rounds' own losses both rules follow the best single expert
    losses = np.abs(pred - wait).mean(axis=2).T
    for plain in (adahedge(losses), ml_poly(losses)):
        assert _mix_aae(plain[20:], pred[:, 20:], wait[20:]) > 0.9 * 600.0


def test_ml_poly_moves_the_weight_to_the_expert_with_the_lowest_loss_whatever_the_scale():
    rng = np.random.default_rng(1)
    losses = rng.uniform(0.0, 1.0, (200, 3)) + np.array([0.5, 0.0, 0.3])
    weights = ml_poly(losses)
    assert weights[-1].argmax() == 1 and weights[-1, 1] > 0.9
    np.testing.assert_allclose(ml_poly(losses * 3600.0), weights)
    # uniform before any round, as AdaHedge is
    np.testing.assert_allclose(weights[0], adahedge(losses)[0])


def test_the_selector_answers_with_each_rule_and_refuses_an_unknown_one():
    pred, wait = _opposite_sides(rounds=8)
    m, rounds, size = pred.shape
    zero = np.zeros((1, rounds * size))
    flat = np.vstack([pred.reshape(m, -1), zero])
    start = np.arange(rounds * size, dtype=float) * 10.0
    wait_s = wait.reshape(-1)
    n = rounds * size
    pool = Pool(flat, wait_s, start + wait_s, start, np.arange(n), np.zeros(n, bool))
    answers = {}
    for rule in RULES:
        sel = HedgeSelector(pool, safe=0, zero=3, rule=rule, min_known=10)
        res = sel.select(
            flat[:, -5:], np.full(5, rounds * size), np.full(5, 1e9), np.zeros(5, bool)
        )
        assert np.all(np.isfinite(res.wait_s))
        answers[rule] = res.wait_s
    assert not np.allclose(answers["adahedge_grad"], answers["adahedge"])
    with pytest.raises(ValueError, match="rule must be one of"):
        HedgeSelector(pool, safe=0, zero=3, rule="nope")


def test_the_certain_tangent_loss_is_summed_over_the_jobs_that_outwaited_the_mix():
    rng = np.random.default_rng(7)
    n = 200
    arrival = np.sort(rng.integers(0, 20000, n)).astype(float)
    start = arrival + np.where(rng.random(n) < 0.2, 0.0, rng.exponential(2000.0, n).round())
    mix = np.where(rng.random(n) < 0.1, -5.0, rng.exponential(1500.0, n).round())
    answers = np.stack([np.zeros(n), rng.exponential(1500.0, n).round()])
    t = np.concatenate([rng.uniform(-100, 26000, 300), arrival[:30], start[:30],
                        arrival[:30] + np.maximum(mix[:30], 0.0)])  # fmt: skip
    got = WaitingTangent(arrival, start, mix, answers)(t)
    want = np.zeros((2, t.size))
    for j, x in enumerate(t):
        e = x - arrival
        sure = (e > np.maximum(mix, 0.0)) & (x < start)  # outwaited the mix, not started
        want[:, j] = (e[sure] - answers[:, sure]).sum(axis=1)
        # the shared part W - e drops out: any wait W >= e gives the same differences
        for extra in (0.0, 500.0):
            tangent = -(answers[:, sure] - (e[sure] + extra))
            np.testing.assert_allclose(np.diff(tangent.sum(axis=1)), np.diff(want[:, j]))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)
