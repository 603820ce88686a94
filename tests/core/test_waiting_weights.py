"""AdaHedge's weights counting the experts' certain errors on jobs still waiting
(``predictor.core.wait.waiting.WaitingShortfall``, ``HedgeSelector(weights_waiting=True)``)."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.hedge import adahedge, adahedge_states, adahedge_weights, weights_given
from predictor.core.wait.selection import HedgeSelector, Pool
from predictor.core.wait.waiting import WaitingShortfall


def test_the_shortfall_is_the_least_error_over_every_wait_still_possible_summed_per_instant():
    rng = np.random.default_rng(5)
    n = 300
    arrival = np.sort(rng.integers(0, 20000, n)).astype(float)  # ties included
    start = arrival + np.where(rng.random(n) < 0.2, 0.0, rng.exponential(2000.0, n).round())
    answers = np.stack([np.zeros(n), rng.exponential(1500.0, n).round(), np.full(n, -3.0)])
    t = np.concatenate([rng.uniform(-100, 26000, 400), arrival[:40], start[:40],
                        arrival[:40] + answers[1, :40]])  # fmt: skip
    got = WaitingShortfall(arrival, start, answers)(t)
    want = np.zeros((3, t.size))
    for j, x in enumerate(t):
        w = (arrival < x) & (x < start)
        e = x - arrival[w]
        # the least |W - p| over every wait W >= e still possible, on a fine grid of W
        grid = e[None, :, None] + np.linspace(0.0, 30000.0, 3001)[None, None, :]
        p = np.maximum(answers[:, w], 0.0)[:, :, None]
        least = np.abs(grid - p).min(axis=2)
        np.testing.assert_allclose(least, np.maximum(e - p[:, :, 0], 0.0), atol=5.0)
        want[:, j] = np.maximum(e - np.maximum(answers[:, w], 0.0), 0.0).sum(axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)


def test_the_weights_of_a_state_are_adahedges_element_for_element():
    rng = np.random.default_rng(2)
    losses = rng.exponential(1.0, (60, 5)) * rng.uniform(0.5, 3.0, 5)
    losses[:3] = 0.0  # the gap stays 0 for a while: the leaders share the weight
    w, cum, gap = adahedge_states(losses, 0.99)
    np.testing.assert_array_equal(w, adahedge(losses, 0.99))
    assert gap[0] == 0.0 and gap[-1] > 0.0
    np.testing.assert_array_equal(weights_given(cum, gap), w)
    for r in (0, 5, 30, 60):
        np.testing.assert_array_equal(weights_given(cum[r], gap[r : r + 1])[0],
                                      adahedge_weights(cum[r], float(gap[r]), 5))  # fmt: skip


def _pool(pred, wait, arrival):
    n = wait.size
    return Pool(pred, wait, arrival + wait, arrival, np.arange(n), np.zeros(n, bool))


def _weights_at(pred, wait, arrival, t, **kw):
    sel = HedgeSelector(_pool(pred, wait, arrival), safe=0, zero=2, round_size=25,
                        min_known=50, **kw)  # fmt: skip
    n_before = np.full(t.size, wait.size)
    return sel.select(pred[:, :1].repeat(t.size, 1), n_before, t, np.zeros(t.size, bool))


def _jam():
    """Experts 0 and 1 equally good on 500 started jobs (errors of 200 s on either side),
    then 100 jobs that arrive at 60,000 s and wait a day, answered 600 s by expert 0 and
    20,000 s by expert 1; expert 2 is always-zero. (pred, wait, arrival)."""
    n0, n1 = 500, 100
    arrival = np.concatenate([np.arange(n0) * 100.0, 60000.0 + np.arange(n1)])
    wait = np.concatenate([np.full(n0, 1000.0), np.full(n1, 86400.0)])
    noise = np.where(np.arange(n0) % 2 == 0, 200.0, -200.0)
    e0 = np.concatenate([1000.0 + noise, np.full(n1, 600.0)])
    e1 = np.concatenate([1000.0 - noise, np.full(n1, 20000.0)])
    return np.stack([e0, e1, np.zeros(n0 + n1)]), wait, arrival


def test_an_expert_whose_short_answers_the_waiting_jobs_outlived_loses_weight_before_they_start():
    """Experts 0 and 1 are equally good on 500 started jobs. Then 100 jobs arrive and wait a
    day; expert 0 answered them 600 s, expert 1 20,000 s. Two hours in, expert 0 has certainly
    erred by 100 x (7,200 - 600) s, expert 1 by nothing yet: the counting weights move to
    expert 1, the plain ones (only started jobs) do not move. With no job waiting both
    weights are equal to the bit; 50 s into the jam only always-zero's answers (0 s) have
    been outlived, so only its weight falls."""
    pred, wait, arrival = _jam()
    t = np.array([55000.0, 60050.0, 60100.0 + 7200.0])  # before the jam, in it, 2 h in
    plain = _weights_at(pred, wait, arrival, t)
    counted = _weights_at(pred, wait, arrival, t, weights_waiting=True)
    np.testing.assert_array_equal(plain.weights[0], counted.weights[0])
    assert counted.weights[1, 0] == counted.weights[1, 1]
    assert counted.weights[1, 2] < plain.weights[1, 2]
    assert counted.weights[2, 1] > 0.99 > plain.weights[2, 1]
    assert abs(counted.wait_s[2] - 800.0) < 5.0 < abs(plain.wait_s[2] - 800.0)  # expert 1 answers
    np.testing.assert_array_equal(plain.weights[2], plain.weights[0])


def test_the_counting_weights_need_adahedge():
    pred, wait = np.zeros((3, 60)), np.zeros(60)
    with pytest.raises(ValueError, match="adahedge"):
        HedgeSelector(_pool(pred, wait, np.arange(60.0)), safe=0, zero=2,
                      rule="flipflop", weights_waiting=True)  # fmt: skip


def test_the_gradient_weights_counting_waiting_jobs_move_before_those_jobs_start():
    """The same jam under AdaHedge on linearised losses (``rule="adahedge_grad"``): the mix
    answered the jam's jobs about 10,000 s. Four hours in, every one has outwaited the mix,
    which certainly answered short, and the expert answering longer certainly does better
    on its tangent (``waiting.WaitingTangent``). With no job waiting the weights equal the
    plain gradient rule's to the bit, and the plain rule does not move."""
    pred, wait, arrival = _jam()
    t = np.array([55000.0, 60100.0 + 4 * 3600.0])
    plain = _weights_at(pred, wait, arrival, t, rule="adahedge_grad").weights
    counted = _weights_at(pred, wait, arrival, t, rule="adahedge_grad", weights_waiting=True)
    np.testing.assert_array_equal(plain[0], counted.weights[0])
    np.testing.assert_array_equal(plain[1], plain[0])
    assert counted.weights[1, 1] > 0.9 > plain[1, 1]
    with pytest.raises(ValueError, match="weights_waiting"):
        _weights_at(pred, wait, arrival, t, rule="mlpoly_grad", weights_waiting=True)
