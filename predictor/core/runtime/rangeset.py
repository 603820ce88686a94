"""The the paper's rangeSet runtime prediction (``002``, runtime section; spec steps 1-6).

For a target submitted at t: take the relevant history (same tuple, ended before t, most
recent first, extended until it spans 90 % of the tuple's runtime range; fallback levels user,
then size); shift every load function through each history job's (load, runtime) and read it
at the predicted load, giving one range per history job; compact each range around its median
to ``max <= 1.2 min``; merge overlapping ranges with a stack; give each range the share of the
level's history inside it (new ranges share 0.1); keep 25; clip to ``[1 s, requested time]``;
the point prediction is ``sum p_i x median_i``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.shift_bounds import relative_bounds
from predictor.core.runtime.stack_merge import merge_ranges


@dataclass(frozen=True)
class RangeSet:
    """Disjoint runtime ranges (seconds) with probabilities summing to 1, sorted by low
    (a calibrated answer, ``auto``'s, sums to at most 1: the rest is the chance that the
    runtime lies in no range).

    level : the history level that answered (``tuple``, ``user``, ``size``, ``all``, ``none``).
    support : history jobs behind the ranges. point : a method's own point prediction (a peer's
    mean, say); None means the paper's weighted sum of range medians.
    """

    low_s: np.ndarray
    high_s: np.ndarray
    probability: np.ndarray
    level: str = "tuple"
    support: int = 0
    point: float | None = None

    @property
    def point_s(self) -> float:
        """The given ``point``, else :func:`weighted_midpoint` of the ranges."""
        if self.point is not None:
            return self.point
        return weighted_midpoint(self.low_s, self.high_s, self.probability)

    @property
    def length_s(self) -> float:
        return float(np.sum(self.high_s - self.low_s))

    def contains(self, value: float) -> bool:
        return bool(np.any((self.low_s <= value) & (value <= self.high_s)))


def weighted_midpoint(low: np.ndarray, high: np.ndarray, prob: np.ndarray) -> float:
    """``sum_i p_i (l_i + u_i) / 2``: a rangeSet's point value (seed "End-to-End
    Predictions-Based Resource Management Framework for Supercomputer Jobs", Section IV-B:
    "the weighted sum of the medians of the ranges"). Arrays (N,), seconds; the one copy of
    the rule (``RangeSet.point_s``, ``jobmolding.core.score.point_prediction``)."""
    return float(np.sum(prob * (low + high) / 2.0))


def relevant_count(runtimes_recent_first: np.ndarray, start: int = 10, overlap: float = 0.9) -> int:
    """How many of the most recent jobs form the relevant history.

    Start with ``start`` jobs and extend back until ``max - min`` of their runtimes reaches
    ``overlap`` of the whole history's ``max - min`` (seed: 10 jobs, about 90 %).
    """
    r = np.asarray(runtimes_recent_first, dtype=float)
    if r.size <= start:
        return int(r.size)
    need = overlap * (r.max() - r.min())
    spans = np.maximum.accumulate(r) - np.minimum.accumulate(r)
    reached = np.flatnonzero(spans >= need - 1e-9)
    return int(max(start, reached[0] + 1))


def shifted_values(
    runtimes: np.ndarray,
    loads: np.ndarray,
    target_load: float,
    slopes: np.ndarray,
    intercepts: np.ndarray | None = None,
    shift: str = "additive",
) -> np.ndarray:
    """(H, F) runtimes predicted at ``target_load`` L by each function f shifted through each
    history job (l_h, r_h).

    ``additive`` (seed): ``r_h + a_f (L - l_h)``. ``relative`` (a measured deviation, see
    ``docs/runtime.md``): ``r_h f(L) / f(l_h)``, falling back to ``r_h`` where f is not
    positive at both loads. With no function at all the value is ``r_h``.
    """
    r = np.asarray(runtimes, dtype=float)[:, None]
    slopes = np.asarray(slopes, dtype=float)
    if slopes.size == 0:
        return r
    lh = np.asarray(loads, dtype=float)[:, None]
    if shift == "additive":
        return r + slopes[None, :] * (target_load - lh)
    if shift == "relative":
        b = np.asarray(intercepts, dtype=float)[None, :]
        at_target, at_hist = slopes[None, :] * target_load + b, slopes[None, :] * lh + b
        ok = (at_target > 0) & (at_hist > 0)
        factor = np.where(ok, at_target / np.where(ok, at_hist, 1.0), 1.0)
        return r * factor
    raise ValueError(f"unknown shift {shift!r}")


def compact_ranges(
    low: np.ndarray, high: np.ndarray, median: np.ndarray, ratio: float = 1.2, widen: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Shrink each range around its median ``c`` to ``[2c/(1+q), 2qc/(1+q)]`` (so
    ``high = q low`` and the middle stays at c) when ``high > q low``; ``widen`` also stretches
    narrower ranges to that width. Ranges stay inside ``[low, high]`` unless widened."""
    low, high, median = (np.asarray(a, dtype=float) for a in (low, high, median))
    c = np.maximum(median, 0.0)
    new_low, new_high = 2.0 * c / (1.0 + ratio), 2.0 * ratio * c / (1.0 + ratio)
    if widen:
        return new_low, new_high
    too_wide = high > ratio * low
    return (
        np.where(too_wide, np.maximum(new_low, low), low),
        np.where(too_wide, np.minimum(new_high, high), high),
    )


def range_probabilities(
    low: np.ndarray, high: np.ndarray, history_runtimes: np.ndarray, new_mass: float = 0.1
) -> np.ndarray:
    """Share of the history runtimes inside each range; ranges holding none share
    ``new_mass`` equally and the others are scaled to ``1 - new_mass`` (seed). Sums to 1."""
    hist = np.sort(np.asarray(history_runtimes, dtype=float))
    counts = np.searchsorted(hist, high, side="right") - np.searchsorted(hist, low, side="left")
    counts = counts.astype(float)
    new = counts == 0
    if not new.any():
        return counts / counts.sum()
    if new.all():
        return np.full(counts.size, 1.0 / counts.size)
    return np.where(new, new_mass / new.sum(), (1.0 - new_mass) * counts / counts.sum())


def cap_ranges(
    low: np.ndarray,
    high: np.ndarray,
    prob: np.ndarray,
    max_ranges: int = 25,
    renormalise: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keep the ``max_ranges`` most probable ranges, sort by low, and renormalise them to sum
    to 1 (``renormalise=False``: each keeps its own probability)."""
    keep = np.sort(np.argsort(-prob, kind="stable")[:max_ranges])
    p = prob[keep]
    return low[keep], high[keep], p / p.sum() if renormalise else p


def clip_ranges(
    low: np.ndarray,
    high: np.ndarray,
    prob: np.ndarray,
    requested_s: float,
    min_s: float = 1.0,
    threshold: float = 0.5,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clip ranges to ``[min_s, requested_s]`` (a job is killed at its requested time;
    ``requested_s <= 0`` means unknown: no upper clip). Ranges that clipping makes overlap
    are merged again, adding their probabilities."""
    upper = requested_s if requested_s > 0 else np.inf
    upper = max(upper, min_s)
    lo, hi = np.clip(low, min_s, upper), np.clip(high, min_s, upper)
    m_lo, m_hi, group = merge_ranges(lo, hi, threshold)
    return m_lo, m_hi, np.bincount(group, weights=prob, minlength=m_lo.size)


def make_disjoint(
    low: np.ndarray, high: np.ndarray, prob: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Disjoint ranges: the partial overlaps the seed's merge keeps (under ``merge_overlap``)
    are cut at their midpoint, each side keeping its probability; a range lying inside the one
    before gives it its probability. The union, and so success, is unchanged; the summed
    length (coverage) no longer counts an overlap twice. Ranges may touch at one point."""
    if low.size < 2:
        return low, high, prob
    order = np.lexsort((high, low))
    out: list[list[float]] = []
    for lo, hi, p in zip(
        low[order].tolist(), high[order].tolist(), prob[order].tolist(), strict=True
    ):
        if out and lo < out[-1][1]:
            if hi <= out[-1][1]:
                out[-1][2] += p
                continue
            lo = out[-1][1] = (lo + out[-1][1]) / 2.0
        out.append([lo, hi, p])
    cols = np.array(out, dtype=float).T
    return cols[0], cols[1], cols[2]


def shifted_bounds(
    runtimes: np.ndarray,
    loads: np.ndarray,
    target_load: float,
    functions: tuple[np.ndarray, np.ndarray],
    shift: str = "additive",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(H,) lowest, highest and median of :func:`shifted_values` over the functions, per
    history job: the relative shift's by one sort of its factors
    (:func:`predictor.core.runtime.shift_bounds.relative_bounds`, the same floats), else
    from the values."""
    slopes, intercepts = functions
    if shift == "relative" and intercepts is not None:
        got = relative_bounds(runtimes, loads, target_load, slopes, intercepts)
        if got is not None:
            return got
    values = shifted_values(runtimes, loads, target_load, slopes, intercepts, shift)
    return values.min(axis=1), values.max(axis=1), np.median(values, axis=1)


def build_rangeset(
    hist_runtimes: np.ndarray,
    hist_loads: np.ndarray,
    level_runtimes: np.ndarray,
    target_load: float,
    requested_s: float,
    functions: tuple[np.ndarray, np.ndarray],
    params: RuntimeParams,
    level: str = "tuple",
) -> RangeSet:
    """Steps 2-6 for one target: ranges from the relevant history, merged, weighted, capped,
    clipped. ``level_runtimes`` is the level's whole history (for the probabilities);
    ``functions`` is ``(slopes, intercepts)``."""
    bounds = shifted_bounds(hist_runtimes, hist_loads, target_load, functions, params.shift)
    low, high = compact_ranges(*bounds, params.compact_ratio, params.widen_to_ratio)
    low, high, _ = merge_ranges(low, high, params.merge_overlap)
    prob = range_probabilities(low, high, level_runtimes, params.new_range_mass)
    low, high, prob = cap_ranges(low, high, prob, params.max_ranges)
    low, high, prob = clip_ranges(
        low, high, prob, requested_s, params.min_runtime_s, params.merge_overlap
    )
    low, high, prob = make_disjoint(low, high, prob)
    return RangeSet(low, high, prob, level=level, support=int(np.size(hist_runtimes)))
