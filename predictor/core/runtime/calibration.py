"""Calibrated range probabilities: reliability tables and an online recalibration map.

A rangeSet gives each range a probability (seed 002, "End-to-End Predictions-Based Resource
Management Framework for Supercomputer Jobs", section "Runtime prediction": the share of the
tuple's history inside the range). A user reads 0.6 as "holds six times in ten"; this module
checks that reading and, where it fails, learns the map from stated to observed frequencies.

* :func:`reliability_table`: ranges binned by stated probability (ten bins of 0.1); per bin the
  number of ranges, the mean stated probability and the observed frequency (the actual runtime
  inside that range). Calibrated means the last two agree in every populated bin.
* :func:`expected_calibration_error`: the count-weighted mean gap between them (ECE).
* :class:`OnlineRecalibration`: isotonic regression (scikit-learn) of hit on stated
  probability, refitted at fixed arrival blocks from the ranges of jobs that had *ended* by the
  block's start (their outcome is known then); until a first fit it returns the stated values.
  Refits depend on the block boundaries only, so chunked and one-process answers agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.isotonic import IsotonicRegression

BIN_EDGES = np.linspace(0.0, 1.0, 11)


def reliability_table(prob: np.ndarray, hit: np.ndarray) -> list[dict[str, Any]]:
    """Rows ``{"bin", "ranges", "stated", "observed"}`` for bins of 0.1 (empty bins left out)."""
    p = np.clip(np.asarray(prob, dtype=float), 0.0, 1.0)
    h = np.asarray(hit, dtype=float)
    if p.shape != h.shape:
        raise ValueError(f"prob and hit differ in shape: {p.shape} vs {h.shape}")
    k = np.minimum(np.searchsorted(BIN_EDGES, p, side="right") - 1, BIN_EDGES.size - 2)
    rows = []
    for b in range(BIN_EDGES.size - 1):
        sel = k == b
        if sel.any():
            rows.append(
                {
                    "bin": f"[{BIN_EDGES[b]:.1f}, {BIN_EDGES[b + 1]:.1f})",
                    "ranges": int(sel.sum()),
                    "stated": float(p[sel].mean()),
                    "observed": float(h[sel].mean()),
                }
            )
    return rows


def expected_calibration_error(prob: np.ndarray, hit: np.ndarray) -> float:
    """Count-weighted mean |stated - observed| over the reliability table's bins."""
    rows = reliability_table(prob, hit)
    total = sum(r["ranges"] for r in rows)
    if total == 0:
        return float("nan")
    return float(sum(r["ranges"] * abs(r["stated"] - r["observed"]) for r in rows) / total)


class OnlineRecalibration:
    """Isotonic map stated -> observed probability, refitted every ``every`` targets.

    Parameters
    ----------
    every : targets per block; the map used for a target is the one fitted at its block's
        first arrival.
    min_ranges : ranges with a known outcome needed before a first fit.
    window : most recent known ranges a fit uses.
    """

    def __init__(self, every: int = 500, min_ranges: int = 200, window: int = 20000) -> None:
        self.every = every
        self.min_ranges = min_ranges
        self.window = window

    def transform(
        self,
        prob: np.ndarray,
        owner: np.ndarray,
        hit: np.ndarray,
        arrival_s: np.ndarray,
        known_s: np.ndarray,
    ) -> np.ndarray:
        """Recalibrated probabilities of every range.

        prob, hit : (r,) stated probability and outcome of each range.
        owner : (r,) the target (0..n-1, arrival order) each range belongs to.
        arrival_s, known_s : (n,) per target: submit time, and when its runtime is known (end).
        A range's outcome is read only for targets known before the block's first arrival.
        """
        prob = np.asarray(prob, dtype=float)
        owner = np.asarray(owner, dtype=np.int64)
        arrival = np.asarray(arrival_s, dtype=float)
        known_at = np.asarray(known_s, dtype=float)[owner]
        out = prob.copy()
        n = arrival.size
        for start in range(0, n, self.every):
            in_block = (owner >= start) & (owner < start + self.every)
            if not in_block.any():
                continue
            past = np.flatnonzero((known_at < arrival[start]) & (owner < start))[-self.window :]
            if past.size < self.min_ranges:
                continue
            iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
            iso.fit(prob[past], np.asarray(hit, dtype=float)[past])
            out[in_block] = iso.predict(prob[in_block])
        return out


def fit_calibration(
    prob: np.ndarray, hit: np.ndarray, min_ranges: int = 200
) -> tuple[list[float], list[float]]:
    """The isotonic map stated -> observed probability as knots ``(x, y)`` (JSON-ready).

    Fitted on ranges whose outcome is known (the tuning part's dev jobs: ``hit`` = the actual
    runtime fell inside). Fewer than ``min_ranges`` ranges: the identity ``([0, 1], [0, 1])``.
    """
    p = np.clip(np.asarray(prob, dtype=float), 0.0, 1.0)
    h = np.asarray(hit, dtype=float)
    if p.size < min_ranges:
        return [0.0, 1.0], [0.0, 1.0]
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, h)
    return [float(v) for v in iso.X_thresholds_], [float(v) for v in iso.y_thresholds_]


def apply_calibration(prob: np.ndarray, knots: tuple[list[float], list[float]]) -> np.ndarray:
    """Calibrated probabilities: the knots' piecewise-linear map (as isotonic ``predict``)."""
    x, y = knots
    return np.interp(np.clip(np.asarray(prob, dtype=float), 0.0, 1.0), x, y)
