"""AdaHedge weighting, the online fallback and the guard (``predictor.core.wait.selection``)."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.prod import ab_prod_share
from predictor.core.wait.selection import (
    HedgeSelector,
    Pool,
    adahedge,
    fixed_share,
    flipflop,
)


def _stream(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(100.0, n))
    return arrival, rng.exponential(1000.0, n)


def _pool(pred: np.ndarray, wait: np.ndarray, arrival: np.ndarray, outside=None) -> Pool:
    n = wait.size
    out = np.zeros(n, bool) if outside is None else outside
    return Pool(pred, wait, arrival + wait, arrival, np.arange(n), out)


def _ask(sel: HedgeSelector, pred: np.ndarray, arrival: np.ndarray, outside=None):
    n = arrival.size
    out = np.zeros(n, bool) if outside is None else outside
    return sel.select(pred, np.arange(n), arrival, out)


def test_adahedge_moves_the_weight_to_the_expert_with_the_lowest_loss():
    losses = np.tile([3.0, 1.0, 2.0], (200, 1)) + np.random.default_rng(0).random((200, 3))
    w = adahedge(losses)
    assert w.shape == (201, 3)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_allclose(w[0], 1 / 3)
    assert w[-1, 1] > 0.99


def test_adahedge_ignores_the_scale_of_the_losses():
    losses = np.random.default_rng(1).random((50, 4))
    np.testing.assert_allclose(adahedge(losses), adahedge(1e6 * losses))


def test_auto_is_never_worse_than_zero_when_one_expert_is_terrible():
    """Adversarial stream: expert 0 is exact except for 10^7 s on one job in a hundred, so it
    leads on three rounds in four; expert 1 is always-zero. Weighting alone pays for the
    terrible answers; the answers must still lose no more than always-zero."""
    arrival, wait = _stream(4000, seed=2)
    terrible = np.where(np.arange(4000) % 100 == 99, 1e7, wait)
    pred = np.stack([terrible, np.zeros(4000)])
    sel = HedgeSelector(_pool(pred, wait, arrival), safe=0, zero=1, round_size=25)
    got = _ask(sel, pred, arrival)
    assert np.mean(np.abs(got.wait_s - wait)) <= np.mean(wait)


def test_the_guard_answers_zero_once_the_rule_has_lost_to_it():
    arrival, wait = _stream(3000, seed=3)
    bad = wait + 5000.0  # worse than zero everywhere
    pred = np.stack([bad, bad * 1.1, np.zeros(3000)])
    sel = HedgeSelector(_pool(pred, wait, arrival), safe=1, zero=2, round_size=25)
    got = _ask(sel, pred, arrival)
    late = got.rounds >= 10
    assert late.sum() > 2000
    assert np.all((got.answered_by[late] == "guard:zero") | (got.weights[late, 2] > 0.99))
    assert np.mean(np.abs(got.wait_s[late] - wait[late])) <= np.mean(wait[late]) * 1.001


def test_a_guard_answering_recent_best_picks_the_expert_best_over_its_window():
    """Expert 0 is exact then 9 000 s late, expert 1 the reverse, expert 2 is zero. With no
    forgetting the mix stays on expert 0, then on zero (expert 1's old losses weigh), and loses
    to zero over a short guard window after the change, so the guard fires; over that window
    expert 1 is exact, so it answers, not zero."""
    arrival, wait = _stream(4000, seed=8)
    first = np.arange(4000) < 2500
    pred = np.stack(
        [wait + np.where(first, 0.0, 9000.0), wait + np.where(first, 9000.0, 0.0), 0 * wait]
    )
    kw = {"safe": 0, "zero": 2, "guard_window": 200, "memory": 1e9}
    best = _ask(HedgeSelector(_pool(pred, wait, arrival), guard_answer="recent_best", **kw),
                pred, arrival)  # fmt: skip
    zero = _ask(HedgeSelector(_pool(pred, wait, arrival), **kw), pred, arrival)
    # once the guard window (200 known jobs) holds only jobs after the change
    fired = np.char.startswith(zero.answered_by.astype(str), "guard:") & (np.arange(4000) > 2750)
    assert fired.sum() > 200
    assert np.all(zero.answered_by[fired] == "guard:zero")
    assert np.all(best.answered_by[fired] == "guard:expert1")
    assert np.mean(np.abs(best.wait_s[fired] - wait[fired])) < 0.1 * np.mean(wait[fired])


def test_a_guard_counted_in_time_measures_the_jobs_started_in_its_span():
    """``recent_zero_aae_s`` is always-zero's AAE over the guard window: with a span, the known
    pool jobs that started in the last ``span`` seconds, at least the newest ``min_known``."""
    arrival, wait = _stream(2000, seed=11)
    pred = np.stack([wait * 0.5, np.zeros(2000)])
    span, min_known = 20000.0, 50
    sel = HedgeSelector(
        _pool(pred, wait, arrival), safe=0, zero=1, guard_span_s=span, min_known=min_known
    )
    got = _ask(sel, pred, arrival)
    start = arrival + wait
    for k in (300, 900, 1999):
        known = np.flatnonzero((start <= arrival[k]) & (np.arange(2000) < k))
        known = known[np.lexsort((known, start[known]))]
        recent = known[start[known] >= arrival[k] - span]
        window = recent if recent.size >= min_known else known[-min_known:]
        assert got.recent_zero_aae_s[k] == pytest.approx(wait[window].mean())
        assert window.size < 3000  # the window in jobs would hold every known job here


def test_a_guard_counted_in_time_reacts_to_a_bad_stretch_the_job_window_averages_away():
    """Expert 0 errs 20 000 s more on rows 1 000-1 499 and is exact elsewhere; expert 1 is
    zero; no forgetting. Counted in jobs (3 000), the guard's window dilutes the stretch with
    the good record before it and never fires there; counted in time (20 000 s, about 200 jobs
    here) it fires within the stretch and the answers there err less."""
    arrival, wait = _stream(4000, seed=12)
    bad = (np.arange(4000) >= 1000) & (np.arange(4000) < 1500)
    pred = np.stack([wait + np.where(bad, 20000.0, 0.0), np.zeros(4000)])
    kw = {"safe": 0, "zero": 1, "memory": 1e9}
    jobs = _ask(HedgeSelector(_pool(pred, wait, arrival), **kw), pred, arrival)
    timed = _ask(HedgeSelector(_pool(pred, wait, arrival), guard_span_s=20000.0, **kw),
                 pred, arrival)  # fmt: skip
    assert not np.any(jobs.answered_by[bad] == "guard:zero")
    assert np.sum(timed.answered_by[bad] == "guard:zero") > 100
    err = {k: np.mean(np.abs(g.wait_s[bad] - wait[bad])) for k, g in (("j", jobs), ("t", timed))}
    assert err["t"] < 0.7 * err["j"]


def test_the_mix_follows_the_best_expert_after_a_change():
    arrival, wait = _stream(8000, seed=4)
    first = np.arange(8000) < 2000
    pred = np.stack(
        [wait + np.where(first, 10.0, 3000.0), wait + np.where(first, 3000.0, 10.0), 0 * wait]
    )
    sel = HedgeSelector(_pool(pred, wait, arrival), safe=0, zero=2, round_size=25)
    got = _ask(sel, pred, arrival)
    assert got.weights[1000, 0] > 0.9
    assert got.weights[-1, 1] > 0.9
    assert np.mean(np.abs(got.wait_s - wait)) < 0.7 * np.mean(wait)


def _inside_outside(n: int = 3000):
    """A stream where every 4th target lies outside the seen states; expert 0 is exact inside
    and terrible outside, expert 1 the reverse, expert 2 answers zero."""
    arrival, wait = _stream(n, seed=5)
    outside = np.arange(n) % 4 == 0
    e0 = np.where(outside, wait + 9000.0, wait)
    e1 = np.where(outside, wait, wait + 9000.0)
    return arrival, wait, outside, np.stack([e0, e1, np.zeros(n)])


def test_outside_targets_get_the_option_measured_best_on_outside_jobs():
    arrival, wait, outside, pred = _inside_outside()  # expert 1 is the safe one here
    sel = HedgeSelector(_pool(pred, wait, arrival, outside), safe=1, zero=2, min_known=20)
    got = _ask(sel, pred, arrival, outside)
    late = got.rounds >= 20
    assert np.all(got.answered_by[late & outside] == "fallback:safe")
    assert np.all(got.answered_by[late & ~outside] == "mix")
    assert np.mean(np.abs(got.wait_s[late] - wait[late])) < 0.1 * np.mean(wait)


def test_a_fallback_among_all_experts_may_pick_one_that_is_not_the_safe_one():
    arrival, wait, outside, pred = _inside_outside()
    # expert 1 is exact outside but is not the safe expert (0, terrible outside)
    pool = _pool(pred, wait, arrival, outside)
    kw = {"safe": 0, "zero": 2, "min_known": 20, "names": ("a", "b", "zero")}
    safe = _ask(HedgeSelector(pool, **kw), pred, arrival, outside)
    among = _ask(HedgeSelector(pool, fallback_among="all", **kw), pred, arrival, outside)
    late = (safe.rounds >= 20) & outside
    assert np.all(among.answered_by[late] == "fallback:b")
    assert not np.any(safe.answered_by[late] == "fallback:b")
    assert np.mean(np.abs(among.wait_s[late] - wait[late])) < 0.1 * np.mean(wait[late])


def test_no_wait_is_read_before_its_job_started():
    arrival, wait = _stream(2000, seed=6)
    pred = np.stack([np.zeros(2000), np.full(2000, 1000.0), wait + 1.0])
    before = _ask(HedgeSelector(_pool(pred, wait, arrival), safe=1, zero=0), pred, arrival)
    later = wait.copy()
    later[1200:] = 1e8
    pred2 = pred.copy()
    pred2[2] = later + 1.0
    after = _ask(HedgeSelector(_pool(pred2, later, arrival), safe=1, zero=0), pred2, arrival)
    np.testing.assert_array_equal(before.wait_s[:1200], after.wait_s[:1200])
    np.testing.assert_array_equal(before.answered_by[:1200], after.answered_by[:1200])


def test_a_larger_pool_of_later_rows_changes_no_earlier_answer():
    arrival, wait = _stream(2000, seed=7)
    pred = np.stack([wait * 0.5, np.zeros(2000), wait * 2.0])
    full = HedgeSelector(_pool(pred, wait, arrival), safe=0, zero=1)
    part_pool = _pool(pred[:, :1500], wait[:1500], arrival[:1500])
    part = HedgeSelector(part_pool, safe=0, zero=1)
    a = _ask(full, pred[:, :1500], arrival[:1500])
    b = _ask(part, pred[:, :1500], arrival[:1500])
    np.testing.assert_array_equal(a.wait_s, b.wait_s)


def test_settings_below_one_are_refused():
    arrival, wait = _stream(10)
    with pytest.raises(ValueError, match="round_size"):
        HedgeSelector(_pool(np.zeros((2, 10)), wait, arrival), safe=0, zero=1, round_size=0)
    bad_options = ({"guard_answer": "best"}, {"fallback_among": "any"}, {"guard_span_s": 0.0},
                   {"meta": "prod"})  # fmt: skip
    for bad in bad_options:
        with pytest.raises(ValueError, match=next(iter(bad))):
            HedgeSelector(_pool(np.zeros((2, 10)), wait, arrival), safe=0, zero=1, **bad)


def test_plain_adahedge_keeps_the_whole_record_and_a_discount_forgets():
    losses = np.r_[np.tile([0.0, 1.0], (100, 1)), np.tile([1.0, 0.0], (60, 1))]
    assert adahedge(losses)[-1, 0] > 0.99
    assert adahedge(losses, discount=0.95)[-1, 1] > 0.99
    with pytest.raises(ValueError, match="discount"):
        adahedge(losses, discount=0.0)


def _regret(weights: np.ndarray, losses: np.ndarray) -> float:
    return float((weights[:-1] * losses).sum() - losses.sum(axis=0).min())


def test_flipflop_follows_a_steady_leader_that_adahedge_averages_after_one_large_round():
    """Expert 0 is best in every round; the first round's losses are 100x the others', which
    fills AdaHedge's mixability gap so its weights stay spread. FlipFlop's leader never
    changes, so it follows it from the second round on."""
    losses = np.tile([1.0, 1.2, 1.25], (60, 1))
    losses[0] = [100.0, 300.0, 300.0]
    ada, ff = adahedge(losses), flipflop(losses)
    assert ada[-1, 0] < 0.8
    np.testing.assert_allclose(ff[1:, 0], 1.0)
    assert _regret(ff, losses) < _regret(ada, losses)


def test_flipflop_hedges_when_following_the_leader_fails():
    """Two experts that take turns at losing 1: the leader loses every round (FTL's regret
    grows as the rounds), and FlipFlop's regret stays within the paper's factor of AdaHedge's."""
    losses = np.array([[0.5, 0.0]] + [[0.0, 1.0], [1.0, 0.0]] * 100)
    ftl_regret = _regret(flipflop(losses, phi=1e12, alpha=1.0), losses)
    assert ftl_regret > 90
    assert _regret(flipflop(losses), losses) <= 2.37 * _regret(adahedge(losses), losses) + 5
    np.testing.assert_allclose(flipflop(losses).sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="rule"):
        HedgeSelector(_pool(np.zeros((2, 3)), np.ones(3), np.arange(3.0)), safe=0, zero=1,
                      rule="median")  # fmt: skip


def _prod_loss(share: np.ndarray, la: np.ndarray, lb: np.ndarray) -> float:
    return float(np.sum(share[:-1] * la + (1.0 - share[:-1]) * lb))


def test_ab_prod_stays_within_its_constants_of_the_benchmark_and_of_the_algorithm():
    """Sani et al. 2014, Theorem 1 with eta = 1/2, w_A = w_B = 1/2 (predictor/core/wait/prod):
    in units of the largest round difference (met in round 0 here), L - L(B) <= 2 ln 2 and
    L - L(A) <= 2 ln 2 + sum(delta^2) / 2, on streams where either is the better one."""
    rng = np.random.default_rng(13)
    for bias in (-0.3, -0.05, 0.0, 0.05, 0.3):
        lb = rng.random(400)
        la = np.clip(lb + bias + 0.4 * rng.standard_normal(400), 0.0, None)
        la[0], lb[0] = 0.0, 5.0  # the scale: the largest |l_B - l_A| is known from round 0
        share = ab_prod_share(la, lb)
        assert share.shape == (401,) and share[0] == pytest.approx(0.5)
        scale = 5.0
        loss = _prod_loss(share, la, lb)
        delta = (lb - la) / scale
        assert (loss - lb.sum()) / scale <= 2 * np.log(2) + 1e-9
        assert (loss - la.sum()) / scale <= 2 * np.log(2) + np.sum(delta**2) / 2 + 1e-9


def test_ab_prod_moves_the_share_to_the_better_one_and_refuses_a_rate_over_one_half():
    better_a = ab_prod_share(np.full(200, 1.0), np.full(200, 2.0))
    better_b = ab_prod_share(np.full(200, 2.0), np.full(200, 1.0))
    assert better_a[-1] > 0.999 and better_b[-1] < 1e-6
    assert np.all(np.diff(better_a) >= 0) and np.all(np.diff(better_b) <= 0)
    with pytest.raises(ValueError, match="eta"):
        ab_prod_share(np.ones(3), np.ones(3), eta=0.6)


def test_the_prod_meta_level_loses_little_to_zero_where_every_expert_is_worse():
    """Both experts err 5,000 s more than zero (zero is the third expert): whether the mix moves
    to zero or Prod shrinks the rule's answers, the AAE ends within 3% of zero's."""
    arrival, wait = _stream(3000, seed=14)
    bad = wait + 5000.0
    pred = np.stack([bad, bad * 1.1, np.zeros(3000)])
    zero_aae = np.mean(wait)
    for meta in ("abprod", "abprod_safe"):
        sel = HedgeSelector(_pool(pred, wait, arrival), safe=1, zero=2, meta=meta)
        got = _ask(sel, pred, arrival)
        assert np.mean(np.abs(got.wait_s - wait)) <= 1.03 * zero_aae
        assert np.mean(np.abs(got.wait_s[1000:])) < 0.05 * np.mean(bad)


def test_the_prod_meta_level_keeps_a_good_rule_where_the_guard_would_fire_late():
    """Expert 0 is exact except on rows 1,000-1,199 (wait + 5,000 s); zero is the other expert.
    Over the whole record the rule beats zero, so Prod keeps the rule's answer through and after
    the stretch (the guard over the last 300 jobs answers 0 from within it to well after it:
    the rule lost to zero over that window); after the stretch Prod's answers err far less."""
    arrival, wait = _stream(4000, seed=15)
    bad = (np.arange(4000) >= 1000) & (np.arange(4000) < 1200)
    pred = np.stack([wait + np.where(bad, 5000.0, 0.0), np.zeros(4000)])
    kw = {"safe": 0, "zero": 1, "memory": 1e9, "guard_window": 300}
    prod = _ask(HedgeSelector(_pool(pred, wait, arrival), meta="abprod", **kw), pred, arrival)
    guard = _ask(HedgeSelector(_pool(pred, wait, arrival), **kw), pred, arrival)
    after = (np.arange(4000) >= 1200) & (np.arange(4000) < 1500)
    assert np.all(prod.share[after] > 0.9) and set(prod.answered_by[after]) == {"mix"}
    assert np.sum(guard.answered_by[after] == "guard:zero") > 50
    err_prod, err_guard = (np.mean(np.abs(g.wait_s[after] - wait[after])) for g in (prod, guard))
    assert err_prod < 0.5 * err_guard


def _switching_losses(before: int = 400, after: int = 100) -> np.ndarray:
    """Expert 0 is best (0.2 against 0.8 and 0.5) for ``before`` rounds, then expert 1."""
    noise = np.random.default_rng(16).random((before + after, 3)) * 0.2
    first = np.arange(before + after)[:, None] < before
    return noise + np.where(first, [0.2, 0.8, 0.5], [0.8, 0.2, 0.5])


def _rounds_to_lead(weights: np.ndarray, expert: int, start: int, level: float = 0.9) -> int:
    """Rounds after ``start`` until ``expert``'s weight first exceeds ``level`` (-1: never)."""
    over = weights[start:, expert] > level
    return int(np.argmax(over)) if over.any() else -1


def test_fixed_share_regains_the_lead_after_a_change_that_plain_adahedge_never_follows():
    """After 400 rounds of expert 0 leading, expert 1 becomes best: Fixed-Share's weight on it
    passes 0.9 within 25 rounds and its mix loss over the last 100 rounds stays within 0.2 of
    expert 1's; plain AdaHedge and FlipFlop (the whole record kept) stay on expert 0."""
    loss = _switching_losses()
    w = fixed_share(loss)
    assert 0 <= _rounds_to_lead(w, 1, 400) <= 25
    late = slice(400, 500)
    assert np.mean(np.sum(w[:-1] * loss, axis=1)[late]) <= np.mean(loss[late, 1]) + 0.2
    for rule in (adahedge, flipflop):
        stuck = rule(loss)
        assert _rounds_to_lead(stuck, 1, 400) == -1
        assert np.mean(np.sum(stuck[:-1] * loss, axis=1)[late]) > np.mean(loss[late, 1]) + 0.5


def test_fixed_share_keeps_every_weight_above_its_share_and_loses_little_to_the_switch():
    """Each row sums to 1 and every weight is at least ``a_r / m`` (``a_r = 1 / (r + 1)``, or
    the fixed share): what lets a new leader regain the weight. Against the one-switch
    sequence (expert 0, then 1) Fixed-Share's loss exceeds by under a quarter of plain
    AdaHedge's excess (which pays about 0.6 on each of the last 100 rounds)."""
    loss = _switching_losses()
    w = fixed_share(loss)
    m, r_count = 3, loss.shape[0]
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_allclose(w[0], 1 / 3)
    floor = 1.0 / (np.arange(1, r_count + 1) + 1) / m
    assert np.all(w[1:] >= floor[:, None] * (1 - 1e-12))
    fixed = fixed_share(loss, share=0.1)
    assert np.all(fixed[1:] >= 0.1 / m * (1 - 1e-12))
    switching = loss[:400, 0].sum() + loss[400:, 1].sum()
    excess = np.sum(w[:-1] * loss) - switching
    assert excess < 0.25 * (np.sum(adahedge(loss)[:-1] * loss) - switching)
    with pytest.raises(ValueError, match="share"):
        fixed_share(loss, share=1.5)


def test_the_tracking_meta_level_moves_to_the_safe_expert_when_the_rule_turns_bad():
    """Expert 0 is exact for 4,000 jobs, then 9,000 s late; expert 1 (safe) is always 600 s
    late; zero is the third. The whole record keeps the mix on expert 0 (no forgetting), and
    Prod keeps the rule, whose record beats zero's by far: both err over 1,500 s on the late
    jobs. The tracking meta-level's answers move to the safe expert: within 15% of its 600 s."""
    n = 6000
    arrival, wait = _stream(n, seed=17)
    late = np.arange(n) >= 4000
    pred = np.stack([np.where(late, wait + 9000.0, wait), wait + 600.0, 0 * wait])
    kw = {"safe": 1, "zero": 2, "memory": 1e9}
    errs = {}
    for meta in ("guard", "abprod", "abprod_safe", "track"):
        got = _ask(HedgeSelector(_pool(pred, wait, arrival), meta=meta, **kw), pred, arrival)
        errs[meta] = np.mean(np.abs(got.wait_s[late] - wait[late]))
    assert errs["track"] <= 1.15 * 600.0
    assert min(errs["guard"], errs["abprod"], errs["abprod_safe"]) > 1500.0


def test_an_expert_the_mix_weighs_below_tiny_is_not_read_and_its_term_bounds_the_change():
    """Expert 1 is a million seconds late: its AdaHedge weight falls far below 1e-12, so the
    answers with ``tiny=1e-12`` do not read it (any value there gives the same answers) and
    move by less than 1e-12 times its prediction; a target's answer is the same alone as in
    the batch. ``tiny=0`` gives the answers without the option, to the bit."""
    arrival, wait = _stream(3000, seed=11)
    pred = np.stack([wait * 1.05, wait + 1e6, np.zeros(3000)])
    sel = HedgeSelector(_pool(pred, wait, arrival), safe=0, zero=2, round_size=25)
    late = np.arange(2000, 3000)
    args = (late, arrival[late], np.zeros(late.size, bool))
    reads = sel.reads(*args, 1e-12)
    assert reads[0].all() and not reads[1].any()
    full = sel.select(pred[:, late], *args).wait_s
    cut = sel.select(pred[:, late], *args, tiny=1e-12).wait_s
    assert np.all(np.abs(full - cut) <= 1e-12 * pred[1, late] + 4 * np.spacing(full))
    junk = pred[:, late].copy()
    junk[1] = np.inf  # read with any positive weight, it would give the cap
    np.testing.assert_array_equal(sel.select(junk, *args, tiny=1e-12).wait_s, cut)
    assert np.all(sel.select(junk, *args).wait_s > cut)
    alone = [sel.select(pred[:, [j]], [j], arrival[[j]], [False], tiny=1e-12).wait_s[0]
             for j in late[::97]]  # fmt: skip
    np.testing.assert_array_equal(alone, cut[::97])
    np.testing.assert_array_equal(sel.select(pred[:, late], *args, tiny=0.0).wait_s, full)
    assert not sel.reads(*args, 1.0).any()  # no weight exceeds 1


def test_the_fallback_and_the_guard_read_their_expert_whatever_its_weight_in_the_mix():
    """Inside the seen states expert 1 is far off (tiny weight); outside it is exact, so the
    fallback (among all) answers with it there: read for an outside target, not for an
    inside one. A guard that fires reads only the expert it answers with (zero)."""
    arrival, wait = _stream(3000, seed=12)
    outside = np.arange(3000) % 4 == 0
    good_in = np.where(outside, wait + 1e5, wait * 1.05)
    good_out = np.where(outside, wait, wait + 1e6)
    pred = np.stack([good_in, good_out, np.zeros(3000)])
    sel = HedgeSelector(
        _pool(pred, wait, arrival, outside), safe=0, zero=2, round_size=25,
        fallback_among="all", names=("a", "b", "zero"),
    )  # fmt: skip
    late = np.arange(2500, 3000)
    inside_args = (late, arrival[late], np.zeros(late.size, bool))
    outside_args = (late, arrival[late], np.ones(late.size, bool))
    assert not sel.reads(*inside_args, 1e-12)[1].any()
    got = sel.select(pred[:, late], *outside_args, tiny=1e-12)
    assert set(got.answered_by) == {"fallback:b"}
    np.testing.assert_array_equal(sel.reads(*outside_args, 1e-12)[:, 0], [False, True, False])
    np.testing.assert_array_equal(got.wait_s, sel.select(pred[:, late], *outside_args).wait_s)
    bad = wait + 5000.0  # every expert but zero loses to zero: the guard fires
    pred = np.stack([bad, bad * 1.1, np.zeros(3000)])
    sel = HedgeSelector(_pool(pred, wait, arrival), safe=1, zero=2, round_size=25)
    early = np.arange(0, 1000)
    args = (early, arrival[early], np.zeros(early.size, bool))
    got = sel.select(pred[:, early], *args, tiny=1e-12)
    guarded = got.answered_by == "guard:zero"
    assert guarded.any()
    reads = sel.reads(*args, 1e-12)
    assert not reads[:2, guarded].any() and reads[2, guarded].all()


@pytest.mark.parametrize("meta", ["guard", "abprod", "track"])
@pytest.mark.parametrize("waiting", [False, True])
def test_one_plan_for_reads_and_select_answers_each_target_as_if_asked_alone(meta, waiting):
    """``auto`` computes a batch's plan (known jobs, weights, fallback, guard) once and hands
    it to ``reads`` and ``select``. On a batch mixing inside and outside targets, at instants
    when pool jobs still wait (so the waiting options read something), the mask and every
    field of the answers equal, column for column and bit for bit, those of each target asked
    alone without a plan (the old ``reads`` weighed only its mixed targets)."""
    arrival, wait = _stream(3000, seed=13)
    outside = np.arange(3000) % 5 == 0
    pred = np.stack([wait * 1.1 + 50.0, wait * 0.7, np.full(3000, 400.0), np.zeros(3000)])
    sel = HedgeSelector(
        _pool(pred, wait, arrival, outside), safe=0, zero=3, round_size=25,
        fallback_among="all", meta=meta, guard_waiting=waiting, fallback_waiting=waiting,
        weights_waiting=waiting and meta == "guard", names=("a", "b", "c", "zero"),
    )  # fmt: skip
    rows = np.arange(100, 3000, 7)
    at = arrival[rows] + 1.0
    args = (rows, at, outside[rows])
    plan = sel.plan(rows, at)
    reads = sel.reads(*args, 1e-12, plan)
    got = sel.select(pred[:, rows], *args, tiny=1e-12, reads=reads, plan=plan)
    fields = ("wait_s", "weights", "rounds", "recent_aae_s", "recent_zero_aae_s", "share")
    for j in range(0, rows.size, 9):
        one = (rows[[j]], at[[j]], outside[rows[[j]]])
        np.testing.assert_array_equal(sel.reads(*one, 1e-12), reads[:, [j]])
        alone = sel.select(pred[:, rows[[j]]], *one, tiny=1e-12)
        for field in fields:
            np.testing.assert_array_equal(getattr(alone, field), getattr(got, field)[[j]])
        assert alone.answered_by[0] == got.answered_by[j]
    assert len(set(got.answered_by)) > 1  # the batch exercises more than one branch


def test_one_targets_plan_is_kept_read_only_and_equals_a_fresh_one():
    """The plan depends on the instant alone: a repeated single target gets the kept plan,
    which equals the one computed afresh (and a batch's plans), and cannot be written to."""
    import pickle

    arrival, wait = _stream(1500, seed=9)
    pred = np.stack([wait * 1.3, wait * 0.5, np.zeros(1500)])
    sel = HedgeSelector(_pool(pred, wait, arrival), safe=0, zero=2, round_size=25)
    rows = np.array([300, 900, 1400])
    whole = sel._plan(rows, arrival[rows])
    for k, row in enumerate(rows):
        one = sel.plan(np.array([row]), arrival[[row]])
        assert sel.plan(np.array([row]), arrival[[row]]) is one
        for name, value in vars(one).items():
            np.testing.assert_array_equal(value, getattr(whole, name)[k : k + 1])
            assert not value.flags.writeable
    assert sel.plan(np.array([300]), arrival[[300]] + 1.0) is not sel.plan(
        np.array([300]), arrival[[300]]
    )  # another instant
    assert "_plans" not in pickle.loads(pickle.dumps(sel)).__dict__
