"""The adaptive interval at one instant equals the online rule's answer for one more target."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.adaptive_now import adaptive_now
from predictor.core.wait.intervals import online_intervals


def _log(n: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    arrival = np.sort(rng.integers(0, 40 * n, n)).astype(float)  # same-second arrivals too
    wait = np.floor(rng.exponential(600.0, n) * (1 + (np.arange(n) > n // 2)))  # a shift
    wait[rng.random(n) < 0.2] = 0.0  # known at arrival
    pred = np.maximum(wait * rng.lognormal(0, 1, n) - 100, 0)
    return pred, wait, arrival, arrival + wait


@pytest.mark.parametrize(("n", "window", "level", "score"), [
    (400, 1000, 0.9, "diff"), (900, 100, 0.8, "diff"), (600, 50, 0.95, "ratio"),
])  # fmt: skip
def test_the_state_at_an_instant_answers_as_the_online_rule_answers_one_more_target(
    n: int, window: int, level: float, score: str
) -> None:
    pred, wait, arrival, known = _log(n, n)
    for at in (arrival[n // 3], arrival[-1], arrival[-1] + 5000.0, known.max() + 1):
        rows = arrival <= at
        state = adaptive_now(pred[rows], wait[rows], arrival[rows], known[rows], at, level,
                             window=window, score=score)  # fmt: skip
        assert state is not None
        for p in (0.0, 35.0, 4000.0):
            got = state.interval(np.array([p]), score)
            # the online rule with the request appended: it arrives at ``at``, never known
            ref = online_intervals(
                np.r_[pred[rows], p], np.r_[wait[rows], np.nan], np.r_[arrival[rows], at],
                np.r_[known[rows], np.inf], (level,), window=window, score=score,
            )  # fmt: skip
            assert got[0][0] == ref.low_s[level][-1]
            assert got[1][0] == ref.high_s[level][-1]
        assert state.known == int(np.sum(known[rows] <= at))
        assert state.pool.size == min(window, state.known)


def test_the_level_moves_with_the_misses_and_nothing_answers_before_min_pool() -> None:
    pred, wait, arrival, known = _log(800, 3)
    early = adaptive_now(pred[:40], wait[:40], arrival[:40], known[:40], arrival[0], 0.9)
    assert early is None  # nothing known at the first arrival
    state = adaptive_now(pred, wait, arrival, known, known.max() + 1, 0.9)
    plain = adaptive_now(pred, wait, arrival, known, known.max() + 1, 0.9, gamma=0.0)
    assert state is not None and plain is not None
    assert plain.target == pytest.approx(0.9)
    assert state.target != plain.target  # the misses moved it
