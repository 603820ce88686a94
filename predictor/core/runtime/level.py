"""Density's level steered to a coverage target from the recent past (no outcome needed).

Seed 002 ("End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs",
section on runtime prediction) scores a rangeSet by success at a *coverage*: summed range
length over the summed length of the baseline ``[min, max]`` of the job's level history
(:mod:`predictor.core.runtime.metrics`). Both lengths are known when the job arrives, before
its runtime is: coverage can be measured on past jobs without waiting for them to end.

A level ``lam`` chosen once on the tuning part drifts away from the coverage it had there (on
the shared logs, dev coverage 24.3-24.5 % became 14.9-25.9 % on the test parts, docs/results.md).
So the level is re-set per block of ``every`` log rows: for block ``b`` (rows ``[b every,
(b + 1) every)``), take the last ``window`` jobs with a positive runtime among the rows before
``b every`` and after the tuning part (whose own level is the one fitted there; a model
retrained on row blocks would also need one fit per tuning-part row), answer each at its own
arrival (history ended before it), and bisect ``log lam``
until their coverage ``sum length(lam) / sum baseline`` meets ``target``. Coverage falls as
``lam`` rises, so the bisection keeps the lowest level whose coverage is ``<= target``.
Everything read is known at the block's first arrival, so a target gets the same level alone
or in a batch, from a log row or from a snapshot with the same ``n_before``.

Feedback on the drift (:func:`feedback_target`). A window's coverage is not its block's: the
level met the setpoint on the 300 jobs before a block and the block's jobs came out wider or
narrower (CTC and SDSC: 25.3 % against a 24 % setpoint). That drift is itself measurable
from the past: for block ``k`` the window before it is the tail of block ``k - 1``, so
``d_k = coverage(window_k at u_(k-1)) - setpoint``, with ``u_(k-1)`` the level the window before
block ``k - 1`` gave for the setpoint, is how far coverage moved from one window to the next
block's tail. Block ``b`` aims at ``setpoint - mean(d)`` over the last ``memory`` drifts
(an integral-free, bounded-memory controller: a steady overshoot is taken off, a steady
undershoot is spent, never above the ``ceiling``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from predictor.core.runtime.combined import MIN_RUNTIME_S, Pieces, _kept_share


def level_for_coverage(
    coverage_at: Callable[[float], float],
    target: float,
    log_lo: float,
    log_hi: float,
    steps: int = 10,
) -> float:
    """``log10 lam`` in ``[log_lo, log_hi]`` whose coverage is at most ``target`` and closest.

    coverage_at : ``log10 lam -> coverage`` (non-increasing in the level).
    Bisection: ``steps`` halvings keep ``coverage_at(hi) <= target < coverage_at(lo)``; returns
    ``hi`` (``log_lo`` when even the lowest level stays under, ``log_hi`` when none does).
    """
    if not log_lo < log_hi:
        raise ValueError(f"log_lo must be below log_hi, got {log_lo} and {log_hi}")
    if coverage_at(log_lo) <= target:
        return log_lo
    lo, hi = log_lo, log_hi
    for _ in range(steps):
        mid = (lo + hi) / 2.0
        if coverage_at(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def feedback_target(setpoint: float, drifts: list[float], ceiling: float) -> float:
    """Coverage target of a block: ``min(setpoint - mean(drifts), ceiling)``, at least 0.

    ``drifts``: the past blocks' ``d_k`` (module doc), newest last; none observed yet gives the
    ``setpoint`` (capped by the ``ceiling``).
    """
    if not drifts:
        return min(setpoint, ceiling)
    return float(min(max(setpoint - float(np.mean(drifts)), 0.0), ceiling))


def window_rows(positive: np.ndarray, end_row: int, window: int, start_row: int = 0) -> np.ndarray:
    """The last ``window`` rows in ``[start_row, end_row)`` whose runtime is positive."""
    lo = max(start_row, 0)
    rows = np.flatnonzero(np.asarray(positive[lo : max(end_row, lo)], dtype=bool)) + lo
    return rows[-window:].astype(np.int64)


def block_of(n_before: np.ndarray, every: int) -> np.ndarray:
    """Block index of each target: ``n_before // every`` (rows arrived before it)."""
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    return np.asarray(n_before, dtype=np.int64) // every


@dataclass(frozen=True)
class LengthTable:
    """Every kept piece of many jobs' densities (clipped as :func:`select` clips them): its
    length, density and job; ``fixed_s`` is the summed length of the jobs answered
    ``[1 s, requested time]`` whatever the level. Total rangeSet length at a level in one
    vectorised pass (pieces tile the axis, so merging touching ones keeps the length)."""

    length_s: np.ndarray
    density: np.ndarray
    owner: np.ndarray
    top: np.ndarray
    fixed_s: float

    def length_at(self, lam: float) -> float:
        """Summed length of the jobs' rangeSets at level ``lam`` (each at least its densest
        piece, as :meth:`DensityRangeSet._rangeset`)."""
        keep = self.density >= np.minimum(lam, self.top[self.owner])
        return float(self.length_s[keep].sum()) + self.fixed_s


@dataclass(frozen=True)
class LengthWindow:
    """A window's :class:`LengthTable` and its summed baseline length (seconds)."""

    table: LengthTable
    base_s: float

    def coverage(self, lam: float) -> float:
        """Coverage of the window's rangeSets at level ``lam``: summed length / baseline."""
        return self.table.length_at(lam) / self.base_s


def length_table(mix: list[tuple[Pieces, str, int, float]]) -> LengthTable:
    """The :class:`LengthTable` of ``(pieces, level, support, requested)`` per job."""
    lens, dens, owner, top, fixed = [], [], [], np.zeros(len(mix)), 0.0
    for j, (pc, level, _, req) in enumerate(mix):
        lo, hi, mass = _clipped(pc, req if req > 0 else None)
        ok = mass > 0
        if level == "none" or not ok.any():
            fixed += max(req, MIN_RUNTIME_S) - MIN_RUNTIME_S
            continue
        d = mass[ok] / np.maximum(hi[ok] - lo[ok], 1e-12)
        lens.append(hi[ok] - lo[ok])
        dens.append(d)
        owner.append(np.full(d.size, j))
        top[j] = d.max()
    if not lens:
        return LengthTable(np.zeros(0), np.zeros(0), np.zeros(0, np.int64), top, fixed)
    cat = np.concatenate
    return LengthTable(cat(lens), cat(dens), cat(owner).astype(np.int64), top, fixed)


def _clipped(pc: Pieces, upper_s: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pieces' edges and masses clipped to ``[1 s, upper_s]`` as :func:`select` clips them."""
    lo, hi, mass = pc.x[:-1], pc.x[1:], pc.m
    if upper_s is not None:
        u = max(upper_s, MIN_RUNTIME_S)
        mass = mass * _kept_share(lo, hi, MIN_RUNTIME_S, u)
        lo, hi = np.clip(lo, MIN_RUNTIME_S, u), np.clip(hi, MIN_RUNTIME_S, u)
    return lo, hi, mass
