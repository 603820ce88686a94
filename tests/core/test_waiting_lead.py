"""Zero's certain lead on jobs still waiting, and the guard that counts it
(``predictor.core.wait.waiting``, ``HedgeSelector(guard_waiting=True)``)."""

from __future__ import annotations

import numpy as np

from predictor.core.wait.selection import HedgeSelector, Pool
from predictor.core.wait.waiting import WaitingLead, lead


def _brute(arrival, start, answer, t):
    out = []
    for x in t:
        waiting = (arrival < x) & (x < start)
        out.append(lead(x - arrival[waiting], np.maximum(answer[waiting], 0.0)).sum())
    return np.array(out)


def test_the_lead_is_the_least_of_zeros_excess_over_every_wait_still_possible():
    rng = np.random.default_rng(0)
    e, r = rng.uniform(0, 5000, 300), rng.uniform(0, 5000, 300)
    waits = e[:, None] + np.linspace(0, 20000, 401)[None, :]  # every W >= e on a grid
    excess = waits - np.abs(waits - r[:, None])  # zero's error less the answer's
    np.testing.assert_allclose(lead(e, r), excess.min(axis=1))  # attained at W = e
    assert np.all(excess >= lead(e, r)[:, None] - 1e-9)


def test_the_summed_lead_equals_a_job_by_job_sum_at_every_instant():
    rng = np.random.default_rng(1)
    n = 400
    arrival = np.sort(rng.integers(0, 20000, n)).astype(float)  # ties included
    wait = np.where(rng.random(n) < 0.2, 0.0, rng.exponential(2000.0, n).round())
    answer = np.where(rng.random(n) < 0.1, -5.0, rng.exponential(1500.0, n).round())
    start = arrival + wait
    t = np.concatenate([rng.uniform(-100, 26000, 500), arrival[:50], start[:50],
                        arrival[:50] + np.maximum(answer[:50], 0)])  # fmt: skip
    got = WaitingLead(arrival, start, answer)(t)
    np.testing.assert_allclose(got, _brute(arrival, start, answer, t), rtol=1e-9, atol=1e-6)


def _selector(pred, wait, arrival, **kw) -> HedgeSelector:
    n = wait.size
    pool = Pool(pred, wait, arrival + wait, arrival, np.arange(n), np.zeros(n, bool))
    return HedgeSelector(pool, safe=0, zero=1, round_size=25, min_known=50, **kw)


def test_the_guard_keeps_a_rule_that_jobs_still_waiting_already_show_better_than_zero():
    """The rule (expert 0) is exact on 400 jobs, then overshoots 100 short waits, losing to
    zero over the guard's last 100 known jobs. Then a jam: 200 jobs arrive, none starts for a
    day, and the rule answered them 20,000 s (3,000 s: answers are capped at the longest wait
    known). A day in, zero has certainly lost far more on the waiting jobs than the rule lost
    on the known ones, so the guard that counts them keeps the rule; the plain guard, seeing
    only the started jobs, answers zero."""
    n0, n1, n2 = 400, 100, 200
    arrival = np.concatenate(
        [np.arange(n0) * 100.0, 40000.0 + np.arange(n1) * 100.0, 50000.0 + np.arange(n2)]
    )
    wait = np.concatenate([np.full(n0, 3000.0), np.full(n1, 300.0), np.full(n2, 1e6)])
    rule = np.concatenate([np.full(n0, 3000.0), np.full(n1, 2000.0), np.full(n2, 20000.0)])
    pred = np.stack([rule, np.zeros(rule.size)])
    t = np.array([50000.0 + 86400.0 + 200.0])  # every jam job still waits
    n_before, out = np.array([rule.size]), np.zeros(1, bool)
    kw = {"guard_window": 100, "memory": 1e6}
    plain = _selector(pred, wait, arrival, **kw).select(pred[:, -1:], n_before, t, out)
    counted = _selector(pred, wait, arrival, guard_waiting=True, **kw).select(
        pred[:, -1:], n_before, t, out
    )
    assert plain.answered_by[0] == "guard:zero"
    assert plain.wait_s[0] == 0.0
    assert counted.answered_by[0] == "mix"
    assert counted.wait_s[0] == 3000.0  # capped at the longest wait known


def test_the_guard_counting_waiting_jobs_answers_as_before_when_none_waits():
    rng = np.random.default_rng(2)
    n = 2000
    arrival = np.cumsum(rng.exponential(100.0, n))
    wait = rng.exponential(1000.0, n)
    pred = np.stack([wait * rng.uniform(0.5, 3.0, n), np.zeros(n)])
    late = arrival[-1] + wait.max() + 1.0  # every pool job has started by then
    t = np.full(50, late)
    n_before = np.full(50, n)
    ask = pred[:, :50]
    a = _selector(pred, wait, arrival).select(ask, n_before, t, np.zeros(50, bool))
    b = _selector(pred, wait, arrival, guard_waiting=True).select(
        ask, n_before, t, np.zeros(50, bool)
    )
    np.testing.assert_array_equal(a.wait_s, b.wait_s)
    np.testing.assert_array_equal(a.answered_by, b.answered_by)
