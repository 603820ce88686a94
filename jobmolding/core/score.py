"""The gain-function score of response-time rangeSets (seed "End-to-End Predictions-Based
Resource Management Framework for Supercomputer Jobs", Section IV-A, Figure 4).

All candidates of one job are normalised by the same scale, the largest upper bound among
them, so that ``t = response / scale`` lies in ``[0, 1]``. The gain of a normalised response
t is ``f(t) = 1 - t`` (short responses are worth more). A rangeSet of N ranges
``[l_i, u_i]`` with probabilities ``p_i`` scores

    score = sum_i p_i * integral_{l_i}^{u_i} (1 - t) dt  /  sum_i (u_i - l_i)
          = sum_i p_i (u_i - l_i) (1 - (l_i + u_i) / 2)  /  sum_i (u_i - l_i)

The division by the covered length is the seed's guard against a rangeSet that collects a
high score from many ranges of long responses; it also favours a set with few, narrow
ranges at short responses. A set of zero total length (every range a point) takes the limit
of N equal widths shrinking to 0: ``sum_i p_i (1 - t_i) / N``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from predictor.core.runtime.rangeset import weighted_midpoint


class RangeSetLike(Protocol):
    """Anything with ``low_s``, ``high_s``, ``probability`` arrays (e.g. the predictor's
    ``RangeSet``)."""

    low_s: np.ndarray
    high_s: np.ndarray
    probability: np.ndarray


def normalising_scale(highs: Sequence[np.ndarray]) -> float:
    """The largest upper bound over all candidates' ranges (1.0 when there is none > 0)."""
    top = max((float(np.max(h)) for h in highs if np.size(h)), default=0.0)
    return top if top > 0 else 1.0


def rangeset_score(low: np.ndarray, high: np.ndarray, prob: np.ndarray, scale: float) -> float:
    """Score of one rangeSet whose ranges are divided by ``scale`` (see the module formula).

    Parameters
    ----------
    low, high : (N,) range bounds in seconds, ``low <= high``.
    prob : (N,) range probabilities (summing to 1).
    scale : the normalising response time, seconds (> 0).

    Returns
    -------
    float in ``[0, 1]`` (0 for an empty set).
    """
    lo = np.asarray(low, dtype=float) / scale
    hi = np.asarray(high, dtype=float) / scale
    p = np.asarray(prob, dtype=float)
    if lo.size == 0:
        return 0.0
    width = hi - lo
    covered = float(width.sum())
    if covered <= 0.0:
        return float(np.sum(p * (1.0 - lo)) / lo.size)
    return float(np.sum(p * width * (1.0 - (lo + hi) / 2.0)) / covered)


def score_candidates(
    lows: Sequence[np.ndarray], highs: Sequence[np.ndarray], probs: Sequence[np.ndarray]
) -> np.ndarray:
    """Scores of K candidates' response rangeSets on one common scale; shape (K,)."""
    scale = normalising_scale(highs)
    return np.array(
        [rangeset_score(lo, hi, p, scale) for lo, hi, p in zip(lows, highs, probs, strict=True)]
    )


def point_prediction(low: np.ndarray, high: np.ndarray, prob: np.ndarray) -> float:
    """The seed's point value of a rangeSet (``predictor.core.runtime.rangeset
    .weighted_midpoint``) over probabilities that need not sum to 1 (a scaled or capped
    set): divided by their sum; NaN for an empty set."""
    low, high, prob = (np.asarray(a, dtype=float) for a in (low, high, prob))
    if low.size == 0:
        return float("nan")
    return weighted_midpoint(low, high, prob) / max(float(prob.sum()), 1e-300)
