"""Zero's certain lead on jobs still waiting, and the guard that counts it
(``predictor.core.wait.waiting``, ``HedgeSelector(guard_waiting=True)``)."""

from __future__ import annotations

import numpy as np

from predictor.core.wait.selection import HedgeSelector, Pool
from predictor.core.wait.waiting import WaitingError, WaitingLead, lead


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


def test_the_waiting_error_is_each_answers_error_were_the_waiting_jobs_to_start_now():
    rng = np.random.default_rng(3)
    n = 300
    arrival = np.sort(rng.integers(0, 20000, n)).astype(float)
    start = arrival + np.where(rng.random(n) < 0.2, 0.0, rng.exponential(2000.0, n).round())
    answers = np.stack([np.zeros(n), rng.exponential(1500.0, n).round(), np.full(n, -3.0)])
    t = np.concatenate([rng.uniform(-100, 26000, 400), arrival[:40], start[:40],
                        arrival[:40] + answers[1, :40]])  # fmt: skip
    got = WaitingError(arrival, start, answers)(t)
    want = np.zeros((3, t.size))
    for j, x in enumerate(t):
        w = (arrival < x) & (x < start)
        want[:, j] = np.abs((x - arrival[w]) - np.maximum(answers[:, w], 0.0)).sum(axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)
    # always-zero's error less an answer's is the summed lead
    lead_1 = WaitingLead(arrival, start, answers[1])(t)
    np.testing.assert_allclose(got[0] - got[1], lead_1, rtol=1e-9, atol=1e-6)


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


def test_the_fallback_counting_waiting_jobs_leaves_an_answer_they_show_wrong():
    """Every job lies outside the seen states. On the 300 started ones zero errs least (waits
    of 0 and 3,000 s in turn, expert 0 answering the other one). Then 1,000 jobs arrive and
    wait for days while expert 0 answers 5,000 s (3,000 s: answers are capped at the longest
    wait known). A day in, were they to start then, zero would err a day on each and expert 0
    3,000 s less: the fallback that counts them (``fallback_waiting``) answers with expert 0,
    the plain one with zero."""
    n0, n1 = 300, 1000
    arrival = np.concatenate([np.arange(n0) * 100.0, 40000.0 + np.arange(n1)])
    turn = np.arange(n0) % 2 == 0
    wait = np.concatenate([np.where(turn, 0.0, 3000.0), np.full(n1, 1e6)])
    expert = np.concatenate([np.where(turn, 3000.0, 0.0), np.full(n1, 5000.0)])
    pred = np.stack([expert, np.zeros(expert.size)])
    outside = np.ones(expert.size, bool)
    t = np.array([40000.0 + 86400.0])
    n_before = np.array([expert.size])

    def ask(**extra):
        pool = Pool(pred, wait, arrival + wait, arrival, np.arange(expert.size), outside)
        sel = HedgeSelector(pool, safe=0, zero=1, round_size=25, fallback_among="all",
                            guard_window=60, min_known=50, **extra)  # fmt: skip
        return sel.select(pred[:, -1:], n_before, t, np.ones(1, bool))

    plain, counted = ask(), ask(fallback_waiting=True)
    assert plain.answered_by[0] == "fallback:zero"
    assert plain.wait_s[0] == 0.0
    assert counted.answered_by[0] == "fallback:expert0"
    assert counted.wait_s[0] == 3000.0
