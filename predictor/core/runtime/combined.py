"""Density rangeSets: the ranges of a runtime density where it is highest, at one global level.

Seed 002 ("End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs",
section "Runtime prediction: rangeSets") builds one 20 %-wide range around each relevant past
runtime of the job's tuple, merges overlapping ones, and scores a rangeSet by *success* (the
actual runtime lies in a range) and *coverage* (summed range length over summed length of the
baseline ``[min, max]`` of the tuple's past runtimes). Both numbers are sums over jobs, so the
best rangeSets for a given success spend length where it buys the most probability per second.

Model. The runtime of a request has the density of a box-kernel mixture on the log scale:
each relevant past runtime ``h`` (the seed's relevant history, most recent first) with weight
``w_h`` (recency: ``decay ** rank``, normalised) spreads its weight uniformly over
``[h e^-b, h e^b]`` in ``log r`` (``b = ln(ratio) / 2``: the seed's 1.2 ratio gives the seed's
ranges). Optionally a second component conditions on the request: the same past jobs'
*used share of their requested time* ``h / req_h``, times the target's requested time (jobs
that run to their limit, or to half of it, do so again at a new limit), mixed with weight
``request_weight``.

Ranges. The edges of all boxes cut the time axis into pieces with constant mixture weight
``c_k``; piece ``[x_k, x_(k+1)]`` holds mass ``m_k = c_k ln(x_(k+1)/x_k) / (2b)`` and density
``m_k / (x_(k+1) - x_k)`` per second. The rangeSet keeps the pieces whose density reaches a
level ``lam`` (per second, the same for every job), merges touching pieces into ranges, clips
them to ``[1 s, requested time]``, and gives each range its mass (renormalised to the kept
mass). Among all sets with the same total mass, the highest-density set is the shortest, so a
common ``lam`` minimises summed length for a given expected success (a Lagrange argument).

Level. ``lam`` is set online (:func:`online_level`): ``log lam`` moves up by ``eta`` for each
known hit and down by ``eta * s / (1 - s)`` for each known miss, which holds long-run success
at the target ``s`` (the adaptive conformal update of Gibbs & Candes 2021 on the level). A
job's outcome is known once it has ended before the target's submission (the leakage rule).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

MIN_RUNTIME_S = 1.0


@dataclass(frozen=True)
class Pieces:
    """Constant-density pieces of one job's mixture: edges ``x`` (k+1,) and masses ``m`` (k,)."""

    x: np.ndarray
    m: np.ndarray

    @property
    def density(self) -> np.ndarray:
        return self.m / np.maximum(np.diff(self.x), 1e-12)


def recency_weights(n: int, decay: float) -> np.ndarray:
    """Weights ``decay ** rank`` (rank 0 = most recent), normalised to sum 1."""
    w = decay ** np.arange(n, dtype=float)
    return w / w.sum() if n else w


def pieces(centres_s: np.ndarray, weights: np.ndarray, ratio: float) -> Pieces:
    """The box-kernel mixture of ``centres_s`` (seconds, > 0) as constant-density pieces.

    Each centre ``h`` spreads its weight over ``[h / sqrt(ratio), h sqrt(ratio)]`` uniformly in
    log time; ``ratio`` > 1 is the seed's max/min ratio of one range. (Called once or twice per
    target: plain ``concatenate`` and slices, not ``np.r_``, whose parsing cost more than the
    arithmetic.)
    """
    return pieces_ordered(centres_s, weights, ratio)[0]


def stable_order(values: np.ndarray, hint: np.ndarray | None = None) -> np.ndarray:
    """``np.argsort(values, kind="stable")``, found from ``hint``, a near order.

    The stable order is the one permutation that sorts the values with equal values in index
    order. ``values`` taken in the hint's order are sorted again, stably: numpy's stable sort
    is a timsort, which passes over a nearly sorted array about as fast as it reads it (107
    against 5,810 us at 44,000 values here). That sorts the values; where equal values are
    then out of index order, they are put in it by one more near-sorted sort of (run of equal
    values, index). Without a hint, or where a value is NaN, the values are sorted afresh.
    ``hint``: an order this function returned for values of the same length (a box's edges
    when the same past jobs are asked about again, or their used shares at another requested
    time), so a permutation of their positions.
    """
    if hint is None or hint.size != values.size or values.size < 2:
        return np.argsort(values, kind="stable")
    near = values[hint]
    step = np.argsort(near, kind="stable")
    order, x = hint[step], near[step]
    if np.isnan(x[-1]):  # NaN sorts last
        return np.argsort(values, kind="stable")
    same = x[1:] == x[:-1]
    if (same & (order[1:] < order[:-1])).any():
        run = np.zeros(x.size, np.int64)
        np.cumsum(~same, out=run[1:])
        order = order[np.argsort(run * x.size + order, kind="stable")]
    return order


def pieces_ordered(
    centres_s: np.ndarray, weights: np.ndarray, ratio: float, hint: np.ndarray | None = None
) -> tuple[Pieces, np.ndarray]:
    """:func:`pieces`, and the stable order of the boxes' edges it sorted by (``hint``: an
    earlier such order, :func:`stable_order`), to hint the next call about the same jobs."""
    c = np.maximum(np.asarray(centres_s, dtype=float), MIN_RUNTIME_S)
    w = np.asarray(weights, dtype=float)
    if c.size == 0:
        return Pieces(np.zeros(1), np.zeros(0)), np.zeros(0, np.int64)
    half = np.sqrt(ratio)
    edges = np.concatenate([c / half, c * half])
    delta = np.concatenate([w, -w])
    order = stable_order(edges, hint)
    x, cover = edges[order], np.cumsum(delta[order])
    keep = np.zeros(x.size, dtype=bool)
    np.greater(x[1:], x[:-1], out=keep[:-1])  # drop zero-length pieces (equal edges)
    x_next = np.empty_like(x)
    x_next[:-1], x_next[-1] = x[1:], x[-1]
    mass = np.maximum(cover, 0.0) * np.log(x_next / x) / np.log(ratio)
    x_k = x[keep]  # consecutive kept pieces share edges: they tile [min edge, max edge]
    return Pieces(np.concatenate([x_k, x_next[keep][-1:]]), mass[keep]), order


def lognormal_pieces(q10_s: float, q50_s: float, q90_s: float, ratio: float) -> Pieces:
    """The quantile GBM's answer as pieces: a log-normal with median ``q50`` and
    ``sigma = ln(q90 / q10) / (2 z_0.9)``, cut at +-3 sigma into log-steps of ``ln(ratio) / 2``
    (so it mixes with the past-runtime boxes at the same resolution)."""
    mu = np.log(max(q50_s, MIN_RUNTIME_S))
    sigma = max(np.log(max(q90_s, MIN_RUNTIME_S) / max(q10_s, MIN_RUNTIME_S)) / (2 * 1.2816), 0.05)
    z = np.arange(mu - 3 * sigma, mu + 3 * sigma + np.log(ratio) / 2, np.log(ratio) / 2)
    mass = np.diff(ndtr((z - mu) / sigma))  # the standard normal's cdf (scipy's norm.cdf)
    return Pieces(np.exp(z), mass / mass.sum())


def mixture(parts: list[tuple[Pieces, float]]) -> Pieces:
    """Weighted sum of piece sets (common refinement of their edges)."""
    parts = [(p, a) for p, a in parts if a > 0 and p.m.size]
    if not parts:
        return Pieces(np.zeros(1), np.zeros(0))
    x = _sorted_unique(np.concatenate([p.x for p, _ in parts]))
    m = np.zeros(x.size - 1)
    log_step = np.log(x[1:] / x[:-1])
    for p, a in parts:
        dens_log = np.zeros(p.m.size + 1)  # mass per unit log time, 0 past the last piece
        dens_log[:-1] = p.m / np.log(p.x[1:] / p.x[:-1])
        k = np.searchsorted(p.x, x[:-1], side="right") - 1
        inside = (k >= 0) & (k < p.m.size)
        m += a * np.where(inside, dens_log[np.minimum(np.maximum(k, 0), p.m.size)], 0.0) * log_step
    return Pieces(x, m)


def _sorted_unique(v: np.ndarray) -> np.ndarray:
    """``np.unique(v)`` of a float array without NaN (sorted, each value once)."""
    v = np.sort(v)
    keep = np.ones(v.size, dtype=bool)
    np.not_equal(v[1:], v[:-1], out=keep[1:])
    return v[keep]


def select(
    pc: Pieces, lam: float, upper_s: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ranges where the density reaches ``lam`` (per second): ``(low_s, high_s, mass)``.

    Touching kept pieces merge into one range; ranges are clipped to ``[1 s, upper_s]`` (the
    requested time: the job is killed there) with the mass of the clipped-off part dropped.
    """
    if pc.m.size == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    return select_clipped(clipped(pc, upper_s), lam)


@dataclass(frozen=True)
class Clipped:
    """Pieces clipped to ``[1 s, upper]``: edges ``lo``, ``hi``, kept ``mass``, ``dens`` per s."""

    lo: np.ndarray
    hi: np.ndarray
    mass: np.ndarray
    dens: np.ndarray

    def top_density(self) -> float:
        """The highest density of a piece that keeps some mass (0 when none does)."""
        return float(np.where(self.mass > 0, self.dens, 0.0).max(initial=0.0))


def clipped(pc: Pieces, upper_s: float | None) -> Clipped:
    """``pc``'s pieces clipped to ``[1 s, upper_s]`` (no upper bound when None or <= 0), the
    mass outside dropped (uniform in log time), with each piece's density per second."""
    lo_x, hi_x, mass = pc.x[:-1], pc.x[1:], pc.m
    if upper_s is not None and upper_s > 0:
        u = max(upper_s, MIN_RUNTIME_S)
        mass = mass * _kept_share(lo_x, hi_x, MIN_RUNTIME_S, u)
        lo_x, hi_x = clip_bounds(lo_x, MIN_RUNTIME_S, u), clip_bounds(hi_x, MIN_RUNTIME_S, u)
    return Clipped(lo_x, hi_x, mass, mass / np.maximum(hi_x - lo_x, 1e-12))


def select_clipped(c: Clipped, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`select` on pieces already clipped."""
    keep = (c.dens >= lam) & (c.mass > 0)
    if not keep.any():
        return np.zeros(0), np.zeros(0), np.zeros(0)
    lo_x, hi_x = c.lo, c.hi
    idx = np.flatnonzero(keep)
    starts = np.ones(idx.size, dtype=bool)
    starts[1:] = (idx[1:] != idx[:-1] + 1) | (lo_x[idx[1:]] > hi_x[idx[:-1]])
    group = np.cumsum(starts) - 1
    low = lo_x[idx][starts]
    high = np.maximum.reduceat(hi_x[idx], np.flatnonzero(starts))
    return low, high, np.bincount(group, weights=c.mass[idx])


def _kept_share(lo: np.ndarray, hi: np.ndarray, a: float, b: float) -> np.ndarray:
    """Share of each piece's log-length inside ``[a, b]`` (mass is uniform in log time)."""
    inner = np.log(clip_bounds(hi, a, b) / clip_bounds(lo, a, b))
    return np.where(hi > lo, inner / np.log(hi / lo), 0.0)


def clip_bounds(v: np.ndarray, a: float, b: float) -> np.ndarray:
    """``np.clip(v, a, b)`` for ``a <= b`` and no NaN (the same values, without its dispatch)."""
    return np.minimum(np.maximum(v, a), b)


def online_level(
    hit_fn: Callable[[int, float], bool],
    n: int,
    arrival_s: np.ndarray,
    known_s: np.ndarray,
    *,
    target: float,
    eta: float,
    start_log_lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-target ``log lam`` from the outcomes known at each arrival (module docstring).

    ``hit_fn(i, log_lam)`` builds target i's rangeSet at that level and says whether it held;
    it is called once per target in arrival order and its answer is read only once target i is
    known (``known_s[i] < arrival_s[later]``). Returns ``(log_lam, hit)``.
    """
    from predictor.core.wait.intervals import known_order

    order, count = known_order(arrival_s, known_s)
    log_lam = np.zeros(n)
    hit = np.zeros(n, dtype=bool)
    level, added = start_log_lam, 0
    down = eta * target / (1.0 - target)
    for i in range(n):
        for j in order[added : count[i]]:
            level += eta if hit[j] else -down
        added = max(added, int(count[i]))
        log_lam[i] = level
        hit[i] = hit_fn(i, level)
    return log_lam, hit
