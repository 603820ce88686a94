"""A method's accuracy on a site's most recent jobs, computed online (no evaluation run).

Waits: over the ``n`` jobs that most recently *started* by ``known_at_s`` (a wait is known at
its job's start), the method's AAE = mean |predicted - actual wait| next to always-zero's AAE
= mean actual wait (seed 002, "Metrics"); the method is *no better than zero* when
``aae >= zero_aae``.

Runtimes: over the ``n`` jobs that most recently *ended* by ``known_at_s``, the method's
success (share of actual runtimes inside one of its ranges) and coverage (summed range
length over the summed baseline ``[min, max]`` length, :mod:`predictor.core.runtime.metrics`),
next to the same figures of the requested-time answer (its point with the seed's AAE-wide
range, ``predictor.core.runtime.peers.RequestedTime``); the method is *no better than the
requested time* when its success is not higher.

Pure numpy over arrays the caller has (the predictions each job got at its own arrival).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

DEFAULT_RECENT = 300


def recent_order(known_s: np.ndarray, known_at_s: float, n: int = DEFAULT_RECENT) -> np.ndarray:
    """Indices of the ``n`` jobs whose fact became known last by ``known_at_s`` (ties: the
    later index first), oldest first."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    known = np.asarray(known_s, dtype=float)
    idx = np.flatnonzero(np.isfinite(known) & (known <= known_at_s))
    idx = idx[np.lexsort((idx, known[idx]))]
    return idx[-n:]


@dataclass(frozen=True)
class WaitAccuracy:
    """Recent wait accuracy: jobs scored, the method's AAE and always-zero's, seconds."""

    jobs: int
    aae_s: float
    zero_aae_s: float

    @property
    def ratio_to_zero(self) -> float:
        return self.aae_s / self.zero_aae_s if self.zero_aae_s > 0 else float("nan")

    @property
    def better_than_zero(self) -> bool:
        return bool(self.jobs > 0 and self.aae_s < self.zero_aae_s)

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "ratio_to_zero": self.ratio_to_zero,
            "better_than_zero": self.better_than_zero,
        }


def recent_wait_accuracy(
    pred_s: np.ndarray,
    wait_s: np.ndarray,
    submit_s: np.ndarray,
    known_at_s: float,
    n: int = DEFAULT_RECENT,
) -> WaitAccuracy:
    """Module docstring; arrays (k,) over candidate jobs (predictions made at each arrival)."""
    wait = np.asarray(wait_s, dtype=float)
    start = np.where(wait >= 0, np.asarray(submit_s, dtype=float) + wait, np.inf)
    idx = recent_order(start, known_at_s, n)
    if idx.size == 0:
        return WaitAccuracy(0, float("nan"), float("nan"))
    pred = np.asarray(pred_s, dtype=float)[idx]
    return WaitAccuracy(
        jobs=int(idx.size),
        aae_s=float(np.mean(np.abs(pred - wait[idx]))),
        zero_aae_s=float(np.mean(wait[idx])),
    )


@dataclass(frozen=True)
class RuntimeAccuracy:
    """Recent runtime accuracy of a method and of the requested-time answer (shares 0-1)."""

    jobs: int
    success: float
    coverage: float
    requested_success: float
    requested_coverage: float

    @property
    def better_than_requested(self) -> bool:
        return bool(self.jobs > 0 and self.success > self.requested_success)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "better_than_requested": self.better_than_requested}


def recent_runtime_accuracy(
    success: np.ndarray,
    length_s: np.ndarray,
    requested_success: np.ndarray,
    requested_length_s: np.ndarray,
    baseline_length_s: np.ndarray,
    end_s: np.ndarray,
    known_at_s: float,
    n: int = DEFAULT_RECENT,
) -> RuntimeAccuracy:
    """Module docstring; arrays (k,) over candidate jobs: whether each job's runtime fell in
    the method's ranges, their summed length, the same for the requested-time answer, the
    baseline length, and when the job ended."""
    idx = recent_order(end_s, known_at_s, n)
    if idx.size == 0:
        nan = float("nan")
        return RuntimeAccuracy(0, nan, nan, nan, nan)
    base = np.asarray(baseline_length_s, dtype=float)[idx]
    has = base > 0

    def cover(length: np.ndarray) -> float:
        sel = np.asarray(length, dtype=float)[idx][has]
        return float(sel.sum() / base[has].sum()) if has.any() else float("nan")

    return RuntimeAccuracy(
        jobs=int(idx.size),
        success=float(np.mean(np.asarray(success, dtype=bool)[idx])),
        coverage=cover(length_s),
        requested_success=float(np.mean(np.asarray(requested_success, dtype=bool)[idx])),
        requested_coverage=cover(requested_length_s),
    )
