"""The local interval: the errors of the jobs predicted nearest, at a level the misses correct."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.intervals import online_intervals
from predictor.core.wait.local_interval import local_now, local_online
from predictor.core.wait.p_within import neighbours


def _log(n: int, seed: int) -> tuple[np.ndarray, ...]:
    """Two kinds of job: predicted short and waiting about that, predicted long and waiting
    anything from minutes to a day; same-second arrivals and zero waits."""
    rng = np.random.default_rng(seed)
    arrival = np.sort(rng.integers(0, 40 * n, n)).astype(float)
    long = rng.random(n) < 0.3
    pred = np.where(long, rng.uniform(20_000, 40_000, n), rng.uniform(0, 300, n)).round()
    wait = np.where(long, rng.uniform(600, 86_400, n), pred * rng.uniform(0.5, 1.5, n)).round()
    wait[rng.random(n) < 0.1] = 0.0
    return pred, wait, arrival, arrival + wait


@pytest.mark.parametrize(("n", "k", "window", "level"), [
    (400, 200, 2000, 0.9), (900, 50, 300, 0.8), (600, 100, 100, 0.5),
])  # fmt: skip
def test_the_state_at_an_instant_answers_as_the_online_rule_answers_one_more_target(
    n: int, k: int, window: int, level: float
) -> None:
    pred, wait, arrival, known = _log(n, n)
    for at in (arrival[n // 3], arrival[-1], known.max() + 1):
        rows = arrival <= at
        state = local_now(pred[rows], wait[rows], arrival[rows], known[rows], at, level,
                          k=k, window=window)  # fmt: skip
        assert state is not None
        assert state.known == int(np.sum(known[rows] <= at))
        assert state.pred_s.size == min(window, state.known)
        for p in (0.0, 150.0, 30_000.0):
            got = state.interval(np.array([p]))
            low, high, _, _ = local_online(
                np.r_[pred[rows], p], np.r_[wait[rows], np.nan], np.r_[arrival[rows], at],
                np.r_[known[rows], np.inf], level, k=k, window=window,
            )  # fmt: skip
            assert (got[0][0], got[1][0]) == (low[-1], high[-1])


@pytest.mark.parametrize("residual", [True, False])
def test_a_request_gets_the_run_of_its_neighbours_errors(residual: bool) -> None:
    """With the step at 0 the interval is the shortest run of ceil(c (k + 1)) of the sorted
    ``max(p + y_j - p_j, 0)`` of the k jobs predicted nearest (their waits ``y_j`` with
    ``residual`` False), found here by brute force."""
    pred, wait, arrival, known = _log(700, 5)
    at = known.max() + 1
    state = local_now(pred, wait, arrival, known, at, 0.8, k=120, window=500, gamma=0.0,
                      residual=residual)  # fmt: skip
    assert state is not None and state.target == pytest.approx(0.8)
    pool = np.sort(np.lexsort((np.arange(wait.size), known))[-500:])  # the last 500 known
    for p in (10.0, 25_000.0):
        rows = pool[neighbours(np.array([p]), pred[pool], 120)[0]]
        near = np.sort(np.maximum(p + wait[rows] - pred[rows], 0.0) if residual else wait[rows])
        size = int(np.ceil(0.8 * 121))
        widths = [near[a + size - 1] - near[a] for a in range(near.size - size + 1)]
        a = int(np.argmin(widths))
        low, high = state.interval(np.array([p]))
        assert (low[0], high[0]) == (near[a], near[a + size - 1])


def test_short_answers_get_short_intervals_and_long_ones_hold() -> None:
    """Against the pooled rule on the same jobs: the jobs told short get a far narrower
    interval, and the jobs told long are covered at about the level, where one pool of
    errors (as wide for everyone) misses them."""
    pred, wait, arrival, known = _log(6000, 11)
    low, high, _, _ = local_online(pred, wait, arrival, known, 0.9)
    pooled = online_intervals(pred, wait, arrival, known, (0.9,))
    p_low, p_high = pooled.low_s[0.9], pooled.high_s[0.9]
    scored = np.arange(pred.size) >= 1000
    short, long = scored & (pred < 1000), scored & (pred > 10_000)
    hit = (low <= wait) & (wait <= high)
    p_hit = (p_low <= wait) & (wait <= p_high)
    assert 0.88 < hit[scored].mean() < 0.96
    assert np.median((high - low)[short]) < 0.1 * np.median((p_high - p_low)[short])
    assert hit[long].mean() > 0.85 > p_hit[long].mean()


def test_nothing_answers_before_min_pool_and_the_level_moves_with_the_misses() -> None:
    pred, wait, arrival, known = _log(800, 3)
    assert local_now(pred[:40], wait[:40], arrival[:40], known[:40], arrival[0], 0.9) is None
    low, high, _, _ = local_online(pred, wait, arrival, known, 0.9)
    assert np.all(high[:5] == np.inf) and np.all(low[:5] == 0.0)  # too few known yet
    moved = local_now(pred, wait, arrival, known, known.max() + 1, 0.9)
    fixed = local_now(pred, wait, arrival, known, known.max() + 1, 0.9, gamma=0.0)
    assert moved is not None and fixed is not None
    assert fixed.target == pytest.approx(0.9) != moved.target


def test_a_request_predicted_beyond_its_neighbours_gets_their_errors_not_their_waits() -> None:
    """Every job waits its prediction and about 5,000 s more. A request predicted longer than
    any of them has all its neighbours below it: their waits lie below what it will wait,
    their errors (shifted by its prediction) do not."""
    n = 600
    arrival = np.arange(n, dtype=float) * 1000.0
    pred = np.linspace(100.0, 10_000.0, n)
    wait = pred + 5_000.0 + np.random.default_rng(2).uniform(-500.0, 500.0, n)
    known = arrival + 1.0  # known at once: every job is in the pool
    at = known.max() + 1
    fair = local_now(pred, wait, arrival, known, at, 0.9, k=50, window=n, gamma=0.0)
    raw = local_now(pred, wait, arrival, known, at, 0.9, k=50, window=n, gamma=0.0,
                    residual=False)  # fmt: skip
    assert fair is not None and raw is not None
    p = 20_000.0  # it will wait 24,500 to 25,500 s
    low, high = fair.interval(np.array([p]))
    assert 24_500.0 <= low[0] < 25_000.0 < high[0] <= 25_500.0
    _, raw_high = raw.interval(np.array([p]))
    assert raw_high[0] <= 15_500.0  # the waits of jobs predicted under 10,000 s


def test_the_chance_to_start_reads_the_same_neighbours_errors_when_asked() -> None:
    """``p_within(..., residual=True)`` counts ``max(p + y_j - p_j, 0) <= T`` over the same
    neighbours, found here by brute force (the benchmark's ``--errors`` reading)."""
    from predictor.core.wait.p_within import p_within

    pred, wait, _, _ = _log(500, 9)
    for p in (50.0, 30_000.0):
        near = neighbours(np.array([p]), pred, 100)[0]
        shifted = np.maximum(p + wait[near] - pred[near], 0.0)
        for t in (100.0, 20_000.0):
            got = p_within(np.array([p]), pred, wait, t, 100, residual=True)[0]
            assert got == pytest.approx(np.mean(shifted <= t))
            assert p_within(np.array([p]), pred, wait, t, 100)[0] == np.mean(wait[near] <= t)
