"""AdaHedge over the experts and their linearised mix (predictor.core.wait.hedge_stacked)."""

from __future__ import annotations

import numpy as np

from predictor.core.wait.hedge import adahedge
from predictor.core.wait.hedge_gradient import adahedge_gradient
from predictor.core.wait.hedge_stacked import adahedge_stacked, fold, stacked_losses
from predictor.core.wait.selection import HedgeSelector, Pool


def _mix_aae(weights: np.ndarray, pred: np.ndarray, wait: np.ndarray) -> float:
    """AAE of the mix answering each round with the weights given the rounds before it."""
    return float(np.abs(np.einsum("rm,mrj->rj", weights[:-1], pred) - wait).mean())


def _opposite_sides(rng: np.random.Generator, rounds: int = 60, size: int = 25):
    """A mix of experts 0 and 1 (600 s over, 900 s under) is exact; the best single errs 600 s."""
    wait = rng.uniform(100.0, 5000.0, (rounds, size))
    return np.stack([wait + 600.0, wait - 900.0, wait + 5000.0]), wait


def _one_best(rng: np.random.Generator, rounds: int = 60, size: int = 25):
    """Expert 0 errs 100 s either way at random, experts 1 and 2 err 3,000 s and more on
    either side: the best single expert is (nearly) the best mix."""
    wait = rng.uniform(100.0, 5000.0, (rounds, size))
    e0 = wait + rng.choice([-100.0, 100.0], wait.shape)
    e1 = wait + 3000.0 + rng.exponential(2000.0, wait.shape)
    e2 = np.zeros_like(wait)
    return np.stack([e0, e1, e2]), wait


def test_the_stacked_rule_does_about_as_well_as_the_better_of_the_plain_and_linearised_rules():
    for stream in (_opposite_sides, _one_best):
        pred, wait = stream(np.random.default_rng(3))
        losses = np.abs(pred - wait).mean(axis=2).T
        rules = {
            "plain": adahedge(losses),
            "grad": adahedge_gradient(pred, wait),
            "stacked": adahedge_stacked(pred, wait),
        }
        aae = {name: _mix_aae(w[30:], pred[:, 30:], wait[30:]) for name, w in rules.items()}
        best = min(aae["plain"], aae["grad"])
        assert aae["stacked"] <= 1.15 * best + 10.0, (stream.__name__, aae)
        if stream is _opposite_sides:  # the rules differ here: the check means something
            assert aae["plain"] > 3.0 * aae["grad"], aae


def test_the_folded_weights_are_a_mix_of_the_experts_and_the_linearised_mix_is_the_extra_expert():
    pred, wait = _opposite_sides(np.random.default_rng(4), rounds=10)
    losses, grad = stacked_losses(pred, wait)
    assert losses.shape == (10, 4)
    mix = np.einsum("rm,mrj->rj", grad[:-1], pred)
    np.testing.assert_allclose(losses[:, 3], np.abs(mix - wait).mean(axis=1))
    np.testing.assert_allclose(losses[:, :3], np.abs(pred - wait).mean(axis=2).T)
    w = adahedge_stacked(pred, wait)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    assert (w >= 0).all()
    only_mix = np.zeros((11, 4))
    only_mix[:, 3] = 1.0
    np.testing.assert_array_equal(fold(only_mix, grad), grad)


def test_the_stacked_weights_counting_waiting_jobs_move_before_those_jobs_start():
    """Experts 0 and 1 equally good on 500 started jobs, then 100 jobs that wait a day,
    answered 600 s by expert 0 and 20,000 s by expert 1 (expert 2: always-zero). Before the
    jam the linearised mix (about 0.5 / 0.5, exact) holds the weight. Four hours in, the jam's
    jobs have outwaited expert 0, zero and that mix (about 10,300 s), not expert 1: the
    counting weights move to expert 1; the plain stacked weights have not moved, and with no
    job waiting both are equal to the bit."""
    n0, n1 = 500, 100
    arrival = np.concatenate([np.arange(n0) * 100.0, 60000.0 + np.arange(n1)])
    wait = np.concatenate([np.full(n0, 1000.0), np.full(n1, 86400.0)])
    noise = np.where(np.arange(n0) % 2 == 0, 200.0, -200.0)
    pred = np.stack([np.concatenate([1000.0 + noise, np.full(n1, 600.0)]),
                     np.concatenate([1000.0 - noise, np.full(n1, 20000.0)]),
                     np.zeros(n0 + n1)])  # fmt: skip
    pool = Pool(pred, wait, arrival + wait, arrival, np.arange(n0 + n1), np.zeros(n0 + n1, bool))
    t = np.array([55000.0, 60100.0 + 4 * 3600.0])

    def weights(**kw):
        sel = HedgeSelector(pool, safe=0, zero=2, round_size=25, min_known=50,
                            rule="adahedge_stacked", **kw)  # fmt: skip
        return sel.select(pred[:, :1].repeat(2, 1), np.full(2, n0 + n1), t, np.zeros(2, bool))

    plain, counted = weights().weights, weights(weights_waiting=True).weights
    np.testing.assert_array_equal(plain[0], counted[0])
    np.testing.assert_array_equal(plain[1], plain[0])
    assert counted[1, 1] > 0.9 > plain[1, 1]
    np.testing.assert_allclose(counted.sum(axis=1), 1.0)
