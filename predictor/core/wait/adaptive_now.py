"""The online adaptive interval at one instant, for a new request: the state that
:func:`predictor.core.wait.intervals.online_intervals` has reached by then.

The evaluation's online rule (``intervals``, module docstring; Gibbs & Candes 2021) answers
each row of a log in arrival order. A live site answers a request *now*, after a sequence of
jobs it told and saw start. By ``at_s`` the rule holds, with one pool (no groups):

- the pool: the scores ``e_j`` of the last ``window`` rows known by ``at_s``, in known order
  (``known_j <= at_s``);
- the miss-rate target ``alpha = (1 - c) + gamma * sum_j ((1 - c) - miss_j)`` over the known
  rows from the ``min_pool``-th on, where ``miss_j`` says whether row ``j``'s own interval,
  made at its arrival, missed its wait (a row answered before ``min_pool`` scores were known
  got ``[0, inf)`` and did not miss);

and a prediction ``p`` gets the shortest run of the sorted pool at ``1 - alpha``, mapped
back and clipped as every target's is. The state is made by ``online_intervals``' own loop
cut to one pool and one level (one sorted window instead of the group's and the whole's, no
per-level dictionaries: 40 ms for 2,000 rows against 65 for ``online_intervals``), and
appending the request to the rows as one more target (known never) gives the same interval
from ``online_intervals`` itself, bit for bit (``tests/core/test_adaptive_now.py``). Once
made, the state answers any number of requests at that instant in ``O(log n)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictor.core.wait.intervals import (
    _map_back,
    check_level,
    interval_from_sorted,
    known_order,
    scores,
    shortest_run,
)
from predictor.core.wait.sorted_window import SortedWindow

WINDOW = 1000  # the trace path's and the evaluations' settings, chosen on the tuning parts
GAMMA = 0.002
MIN_POOL = 30
REPLAYED = 2000  # rows a live site replays (restarted there, KTH-SP2 held 0.900: docs/results.md)


@dataclass(frozen=True)
class AdaptiveNow:
    """The rule's state at one instant for one confidence ``level``: the sorted pool, the
    level its shortest run is taken at (``target = 1 - alpha``) and the rows that fed it."""

    level: float
    pool: np.ndarray
    target: float
    known: int

    def interval(self, pred_s: np.ndarray, score: str = "diff") -> tuple[np.ndarray, np.ndarray]:
        """``(low_s, high_s)`` for predictions ``pred_s`` made now."""
        return interval_from_sorted(pred_s, self.pool, min(max(self.target, 0.0), 1.0), score)


def level_words(target: float, level: float) -> str:
    """How the rule read its pool, in words: at ``target`` (the confidence ``level``
    corrected by the misses), or, once the misses have pushed ``target`` to 1 or past it,
    over every error in the pool (the widest interval the pool gives; the evaluations' rule
    answers so too)."""
    if target >= 1.0:
        return (
            f"over every one of those errors: their misses pushed the level from {level:g} to "
            f"{target:.3f}, so the interval is the widest they give"
        )
    return f"at level {target:.3f} (the confidence {level:g} corrected by their misses)"


def adaptive_now(
    pred_s: np.ndarray,
    wait_s: np.ndarray,
    arrival_s: np.ndarray,
    known_s: np.ndarray,
    at_s: float,
    level: float,
    *,
    window: int = WINDOW,
    min_pool: int = MIN_POOL,
    gamma: float = GAMMA,
    score: str = "diff",
) -> AdaptiveNow | None:
    """The online rule's state at ``at_s`` (module docstring), or None while fewer than
    ``min_pool`` rows are known by then (the rule would answer ``[0, inf)``).

    pred_s, wait_s, arrival_s, known_s : (n,) the rows in arrival order, as
        ``online_intervals`` takes them (a row's wait is read once it is known).
    """
    level = check_level(level)
    known = np.asarray(known_s, dtype=float)
    n_known = int(np.sum(known <= at_s))
    if n_known < min_pool:
        return None
    pred = np.asarray(pred_s, dtype=float)
    y = np.asarray(wait_s, dtype=float)
    e = scores(pred, y, score)
    order, count = known_order(arrival_s, known)
    pool, alpha, miss = SortedWindow(window), 1.0 - level, np.zeros(pred.size, dtype=bool)
    added = 0

    def feed(upto: int) -> float:
        """Rows ``order[added:upto]`` become known: their scores join the pool and, once it
        holds ``min_pool``, their misses move the level (``online_intervals``' order)."""
        a = alpha
        for j in order[added:upto]:
            pool.append(e[j])
            if len(pool) >= min_pool:
                a += gamma * ((1.0 - level) - float(miss[j]))
        return a

    for i in range(pred.size):  # online_intervals for one pool and one level
        alpha = feed(int(count[i]))
        added = max(added, int(count[i]))
        if len(pool) < min_pool:
            continue  # [0, inf): no miss
        lo_e, hi_e = shortest_run(pool.sorted(), min(max(1.0 - alpha, 0.0), 1.0))
        p_i, y_i = max(float(pred[i]), 0.0), float(y[i])
        lo = max(_map_back(p_i, lo_e, score), 0.0)
        hi = max(_map_back(p_i, hi_e, score), lo)
        miss[i] = not (lo <= y_i <= hi)
    alpha = feed(n_known)  # the rows known after the last arrival, by at_s
    return AdaptiveNow(level, pool.sorted().copy(), 1.0 - alpha, n_known)
