"""Runtime and estimate of a molded job inside a replay: two models, chosen by name.

``paper`` (seed "End-to-End Predictions-Based Resource Management Framework for
Supercomputer Jobs", Section V-C, job molding evaluation)
    Estimate: ``maxPrevious`` is the largest estimate this user gave before for the new
    size, ``maxLimit`` the machine's runtime limit. A smaller size takes the smallest of
    {maxPrevious, maxLimit} that exceeds the original estimate (the original if neither
    does); a larger size keeps the original estimate. Actual runtime: a roulette-wheel
    draw among the user's past runtimes at the new size (each past job one slot, so a value
    seen twice is twice as likely), from an injected random generator.
``downey`` (work-conserving: the job's own runtime, scaled)
    Downey's speedup model ("A model for speedup of parallel programs", 1997), as used in
    Cirne and Berman's moldable-job studies: with average parallelism A and variance of
    parallelism sigma, ``T(n) = T(n0) S(n0) / S(n)``. The estimate scales by the same
    factor, capped at ``maxLimit``. This keeps the evaluation honest where resampled
    runtimes say nothing about how *this* job scales.

In both, a job is killed at its estimate: the runtime never exceeds the new estimate.

The decision (``jobmolding.core.arrival``) predicts a candidate's runtime the same way the
model runs it: under ``downey`` the job's own predicted rangeSet times ``S(n0) / S(n)``
(:func:`scaled_rangeset`), never the runtimes of other jobs that happened to run at that
size; under ``paper`` each size is predicted from the history at that size, as the seed does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from predictor.core.runtime.rangeset import RangeSet

RUNTIME_MODELS = ("downey", "paper")  # the default first: the live sites' model


def paper_estimate(
    original_procs: int,
    original_estimate_s: float,
    new_procs: int,
    max_previous_s: float,
    max_limit_s: float,
) -> float:
    """The seed's estimate for a job moved from ``original_procs`` to ``new_procs``.

    ``max_previous_s`` may be NaN (no previous estimate at that size).
    """
    if new_procs >= original_procs:
        return float(original_estimate_s)
    above = [v for v in (max_previous_s, max_limit_s) if v == v and v > original_estimate_s]
    return float(min(above)) if above else float(original_estimate_s)


def roulette_runtime(
    past_runtimes_s: Sequence[float] | np.ndarray, rng: np.random.Generator
) -> float:
    """One roulette-wheel draw: distinct past runtimes weighted by how often they occurred."""
    past = np.asarray(past_runtimes_s, dtype=float)
    if past.size == 0:
        raise ValueError("roulette wheel over no past runtimes: the size has no finished job")
    values, counts = np.unique(past, return_counts=True)
    wheel = np.cumsum(counts) / counts.sum()
    return float(
        values[min(int(np.searchsorted(wheel, rng.random(), side="right")), values.size - 1)]
    )


def downey_speedup(n: np.ndarray | float, a: float, sigma: float) -> np.ndarray:
    """Downey's speedup ``S(n)`` for average parallelism ``a`` (>= 1) and ``sigma`` (>= 0).

    sigma <= 1: ``A n / (A + sigma (n - 1) / 2)`` for ``1 <= n <= A``;
    ``A n / (sigma (A - 1/2) + n (1 - sigma / 2))`` for ``A <= n <= 2A - 1``; A beyond.
    sigma >= 1: ``n A (sigma + 1) / (sigma (n + A - 1) + A)`` for
    ``1 <= n <= A + A sigma - sigma``; A beyond. ``S(1) = 1`` and S is continuous.
    """
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    a = max(float(a), 1.0)
    if sigma <= 1.0:
        low = a * n / (a + sigma * (n - 1.0) / 2.0)
        mid = a * n / (sigma * (a - 0.5) + n * (1.0 - sigma / 2.0))
        return np.where(n <= a, low, np.where(n <= 2.0 * a - 1.0, mid, a))
    rising = n * a * (sigma + 1.0) / (sigma * (n + a - 1.0) + a)
    return np.where(n <= a + a * sigma - sigma, rising, a)


def downey_factor(original_procs: int, new_procs: int, a: float | None, sigma: float) -> float:
    """``S(n0) / S(n)``: how much longer the job runs on ``new_procs`` (A defaults to n0)."""
    a = float(original_procs) if a is None else float(a)
    s0 = float(downey_speedup(original_procs, a, sigma))
    return s0 / float(downey_speedup(new_procs, a, sigma))


def scaled_rangeset(rs: RangeSet, factor: float) -> RangeSet:
    """``rs`` with every range (and its own point, if any) multiplied by ``factor`` (> 0):
    a job's predicted runtime at another size under a speed-up model."""
    point = None if rs.point is None else float(rs.point) * factor
    return replace(rs, low_s=rs.low_s * factor, high_s=rs.high_s * factor, point=point)
