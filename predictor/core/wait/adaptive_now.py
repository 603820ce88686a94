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
back and clipped as every target's is. Appending the request to the rows as one more target
(known never) gives the same interval from ``online_intervals`` itself
(``tests/core/test_adaptive_now.py``); this computes the state once, so any number of
requests at that instant read it in ``O(log n)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictor.core.wait.intervals import _back, check_level, online_intervals, scores, shortest_run

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
        lo_e, hi_e = shortest_run(self.pool, min(max(self.target, 0.0), 1.0))
        shape = np.shape(pred_s)
        lo = np.maximum(_back(pred_s, np.full(shape, lo_e), score), 0.0)
        hi = np.maximum(_back(pred_s, np.full(shape, hi_e), score), lo)
        return lo, hi


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
    rows = online_intervals(
        pred_s, wait_s, arrival_s, known, (level,), window=window, min_pool=min_pool,
        gamma=gamma, score=score,
    )  # fmt: skip
    y = np.asarray(wait_s, dtype=float)
    lo, hi = rows.low_s[level], rows.high_s[level]
    miss = (rows.pool_size > 0) & ~((lo <= y) & (y <= hi))
    order = np.lexsort((np.arange(known.size), known))
    fed = order[:n_known]  # known by at_s, in the order the rule learnt them
    alpha = 1.0 - level
    for m in miss[fed[min_pool - 1 :]]:  # alpha moves on the one pool once it holds min_pool
        alpha += gamma * ((1.0 - level) - float(m))  # one by one, as the rule adds them
    e = scores(np.asarray(pred_s, dtype=float)[fed], y[fed], score)
    return AdaptiveNow(level, np.sort(e[-window:]), 1.0 - alpha, n_known)
