"""Response time = queue wait + runtime, as a rangeSet (the paper "End-to-End Predictions-Based
Resource Management Framework for Supercomputer Jobs", job molding: "these
predictions are added to obtain a rangeSet of predicted response times").

A wait given as a point shifts every runtime range; a wait given as ranges is added range by
range (``[w_lo + r_lo, w_hi + r_hi]`` with probability ``p_w x p_r``, the two assumed
independent), then overlapping sums are merged with the same stack rule as runtime ranges,
the set is capped like a runtime rangeSet and made disjoint the same way.
"""

from __future__ import annotations

import numpy as np

from predictor.core.runtime.rangeset import RangeSet, cap_ranges, make_disjoint
from predictor.core.runtime.stack_merge import merge_ranges


def wait_rangeset(wait_s: float, upper_s: float | None = None) -> RangeSet:
    """A wait as a rangeSet: the point ``[w, w]``, or ``[w, upper]`` when a bound is given."""
    wait_s = max(float(wait_s), 0.0)
    high = wait_s if upper_s is None else max(float(upper_s), wait_s)
    return RangeSet(np.array([wait_s]), np.array([high]), np.array([1.0]), level="wait")


def response_rangeset(
    runtime: RangeSet,
    wait: float | RangeSet,
    merge_overlap: float = 0.5,
    max_ranges: int = 25,
) -> RangeSet:
    """Response-time rangeSet of a job: its wait (seconds or a rangeSet) plus its runtime.

    Returns ranges sorted by low. Each keeps the probability the product gives it, so they sum
    to the wait's total times the runtime's, less the ranges the cap drops: a calibrated
    runtime's probabilities sum to the chance that the runtime lies in some range
    (docs/runtime.md), and the response states that same chance rather than 1. The point is
    the wait's point plus the runtime's (``predicted end = start + runtime``); ``level`` and
    ``support`` are the runtime's.
    """
    point = (wait.point_s if isinstance(wait, RangeSet) else max(float(wait), 0.0)) + (
        runtime.point_s
    )
    wait = wait if isinstance(wait, RangeSet) else wait_rangeset(wait)
    low = (wait.low_s[:, None] + runtime.low_s[None, :]).ravel()
    high = (wait.high_s[:, None] + runtime.high_s[None, :]).ravel()
    prob = (wait.probability[:, None] * runtime.probability[None, :]).ravel()
    m_low, m_high, group = merge_ranges(low, high, merge_overlap)
    m_prob = np.bincount(group, weights=prob, minlength=m_low.size)
    m_low, m_high, m_prob = cap_ranges(m_low, m_high, m_prob, max_ranges, renormalise=False)
    m_low, m_high, m_prob = make_disjoint(m_low, m_high, m_prob)
    return RangeSet(
        m_low, m_high, m_prob, level=runtime.level, support=runtime.support, point=point
    )
