"""The headline rules scored on a log as a site would have told them
(``jobmolding.core.headline_eval``)."""

from __future__ import annotations

import numpy as np
import pytest

from jobmolding.core.headline import RULES, choose_rule, headline_wait
from jobmolding.core.headline_eval import evaluate_rules, pools
from jobmolding.core.headline_scores import Answered
from predictor.core.wait.intervals import interval_from_pool, scores


def test_a_block_pools_the_jobs_that_ended_last_before_its_first_arrival() -> None:
    submit = np.arange(10.0) * 100.0
    end = submit + np.array([50, 680, 50, 50, 50, 50, 50, 50, 50, 50.0])  # row 1 ends at 780
    blocks = pools(submit, end, np.arange(6, 10), block=2, rule_jobs=3)
    assert [rows.tolist() for rows, _ in blocks] == [[6, 7], [8, 9]]
    # at 600 row 1 has not ended; at 800 it is among the last three to end (by arrival it
    # would not be: rows 5, 6 and 7 arrived after it)
    assert [pool.tolist() for _, pool in blocks] == [[3, 4, 5], [1, 6, 7]]
    early = pools(submit, end, np.array([0, 1]), block=2, rule_jobs=3)
    assert early[0][1].size == 0  # nothing had ended at the first arrival


def answered(n: int, seed: int = 0) -> Answered:
    rng = np.random.default_rng(seed)
    y = rng.exponential(3000.0, n)
    h = y * rng.uniform(0.2, 2.0, n)  # the history errs by a factor
    q = np.where(np.arange(n) < n // 2, y + 4000.0, y * 0.5)  # the queue: over, then under
    return Answered(h, q, y, np.full(n, 100.0), np.full(n, 100.0))


def test_each_block_tells_the_rule_chosen_on_its_pool_with_that_rule_s_interval() -> None:
    a, n = answered(400), 400
    submit = np.arange(n) * 10.0
    end = submit + 5.0
    test = np.arange(100, n)
    table, kept = evaluate_rules(a, submit, end, test, block=50, rule_jobs=60, level=0.8)
    by = {s.name: s for s in table}
    assert set(RULES) <= set(by) and {"chosen online", "always zero"} <= set(by)
    p, lo, hi, rules = [], [], [], []
    for rows, pool in pools(submit, end, test, 50, 60):
        rule = choose_rule(a.history_s[pool], a.queue_s[pool], a.actual_s[pool]).rule
        told = headline_wait(rule, a.history_s[rows], a.queue_s[rows])
        base = headline_wait(rule, a.history_s[pool], a.queue_s[pool])
        low, high = interval_from_pool(told, scores(base, a.actual_s[pool]), 0.8)
        p.append(told), lo.append(low), hi.append(high), rules.append((rule, rows.size))
    p, lo, hi, y = np.concatenate(p), np.concatenate(lo), np.concatenate(hi), a.actual_s[test]
    online = by["chosen online"]
    assert online.mae_s == pytest.approx(np.mean(np.abs(p - y)))
    assert online.coverage == pytest.approx(np.mean((lo <= y) & (y <= hi)))
    assert sum(kept.values()) == test.size and len(kept) >= 2  # the queue changed: so did the rule
    for rule, size in rules:
        assert kept[rule] >= size
    # the old site: the same points as "later", another pool
    assert by["later, history pool (before)"].mae_s == by["later"].mae_s
    assert by["later, history pool (before)"].coverage != by["later"].coverage
    assert by["always zero"].mae_s == pytest.approx(np.mean(y))


def test_the_online_row_learns_the_interval_from_every_told_job_as_it_starts() -> None:
    """The service's interval since stop 57 (local since stop 59): each block's rows from the
    online rule run over the ``replayed`` answered jobs before the block, every job told the
    block's rule, once ``TOLD_FROM`` of them have started (stop 61), and from the block's fit
    pool before, as a site answers; the points are the chosen rule's, as in "chosen online"."""
    from jobmolding.core.headline_eval import ONLINE, _told_online
    from predictor.core.wait.intervals import known_order
    from predictor.core.wait.local_interval import TOLD_FROM, local_online

    a, n = answered(500, seed=4), 500
    submit = np.arange(n) * 10.0
    end = submit + a.actual_s + 5.0
    test = np.arange(150, n)
    table, _ = evaluate_rules(a, submit, end, test, block=50, rule_jobs=60, level=0.8)
    by = {s.name: s for s in table}
    assert by[ONLINE].mae_s == by["chosen online"].mae_s
    blocks = pools(submit, end, test, 50, 60)
    rule_of = [choose_rule(a.history_s[p], a.queue_s[p], a.actual_s[p]).rule for _, p in blocks]
    p, lo, hi = _told_online(rule_of, a.history_s, a.queue_s, a.actual_s, submit, blocks, 0.8,
                             replayed=250)  # fmt: skip
    rows, pool = blocks[3]  # its replay starts 250 jobs before it
    span = slice(int(rows[0]) - 250, int(rows[-1]) + 1)
    pred = headline_wait(rule_of[3], a.history_s[span], a.queue_s[span])
    known = submit[span] + a.actual_s[span]
    low, high, _, _ = local_online(pred, a.actual_s[span], submit[span], known, 0.8)
    read = known_order(submit[span], known)[1][250:] >= TOLD_FROM
    assert 0 < read.sum() < read.size  # some answered before TOLD_FROM had started, some after
    np.testing.assert_array_equal(lo[150:200][read], low[250:][read])
    np.testing.assert_array_equal(hi[150:200][read], high[250:][read])
    base = headline_wait(rule_of[3], a.history_s[pool], a.queue_s[pool])
    fit_lo, fit_hi = interval_from_pool(pred[250:], scores(base, a.actual_s[pool]), 0.8)
    np.testing.assert_array_equal(lo[150:200][~read], fit_lo[~read])
    np.testing.assert_array_equal(hi[150:200][~read], fit_hi[~read])
    y = a.actual_s[test]
    whole = _told_online(rule_of, a.history_s, a.queue_s, a.actual_s, submit, blocks, 0.8)
    assert by[ONLINE].coverage == pytest.approx(np.mean((whole[1] <= y) & (y <= whole[2])))
