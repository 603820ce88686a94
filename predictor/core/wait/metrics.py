"""Accuracy of queue-wait predictions (docs/apq.md, "Metrics"; the paper "End-to-End
Predictions-Based Resource Management Framework for Supercomputer Jobs", evaluation section).

All functions take aligned arrays over the same test jobs: ``pred_s`` (predicted wait),
``wait_s`` (actual wait) and, for the scaled error, ``run_s`` (actual run time), in seconds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

WAIT_CLASS_EDGES = np.array([100.0, 1e3, 1e4, 1e5])
WAIT_CLASS_LABELS = ("[0,100s)", "[100,1000s)", "[1000,1e4s)", "[1e4,1e5s)", ">=1e5s")
# "Correct" slabs: predicted value up to the bound -> allowed absolute error (seconds).
SLAB_BOUNDS_S = np.array([1, 3, 6, 12, 24, 48]) * 3600.0
SLAB_WIDTHS_S = np.array([0.25, 0.5, 1, 3, 6, 12, 24]) * 3600.0
MIN_RESPONSE_S = 1.0  # floor of the scaled-AAE denominator (a 0 s response would divide by 0)


def aae(pred_s: np.ndarray, wait_s: np.ndarray) -> float:
    """Average absolute error ``mean |pred - wait|`` in seconds."""
    return float(np.mean(np.abs(np.asarray(pred_s) - np.asarray(wait_s))))


def scaled_aae(pred_s: np.ndarray, wait_s: np.ndarray, run_s: np.ndarray) -> float:
    """Seed 002's scaled AAE: ``mean |pred - wait| / max(wait + run, 1 s)``."""
    response = np.maximum(np.asarray(wait_s) + np.maximum(np.asarray(run_s), 0), MIN_RESPONSE_S)
    return float(np.mean(np.abs(np.asarray(pred_s) - np.asarray(wait_s)) / response))


def wait_class(wait_s: np.ndarray) -> np.ndarray:
    """Class index 0..4 for [0,100), [100,1e3), [1e3,1e4), [1e4,1e5), >= 1e5 seconds."""
    return np.searchsorted(WAIT_CLASS_EDGES, np.asarray(wait_s, dtype=float), side="right")


def aae_by_class(pred_s: np.ndarray, wait_s: np.ndarray) -> dict[str, dict[str, float | None]]:
    """AAE (seconds) and job count per wait class of the *actual* wait."""
    err = np.abs(np.asarray(pred_s) - np.asarray(wait_s))
    cls = wait_class(wait_s)
    out: dict[str, dict[str, float | None]] = {}
    for k, label in enumerate(WAIT_CLASS_LABELS):
        sel = cls == k
        out[label] = {
            "jobs": int(sel.sum()),
            "aae_s": float(err[sel].mean()) if sel.any() else None,
        }
    return out


def allowed_error_s(pred_s: np.ndarray) -> np.ndarray:
    """Largest error still "correct": ``max(1 h, slab width of the predicted value)``.

    Slabs: predicted <= 1 h: 15 min; <= 3 h: 30 min; <= 6 h: 1 h; <= 12 h: 3 h; <= 24 h: 6 h;
    <= 48 h: 12 h; beyond: 1 day.
    """
    slab = SLAB_WIDTHS_S[np.searchsorted(SLAB_BOUNDS_S, np.asarray(pred_s, dtype=float), "left")]
    return np.maximum(3600.0, slab)


def correct_share(pred_s: np.ndarray, wait_s: np.ndarray) -> float:
    """Share of predictions whose absolute error is within :func:`allowed_error_s`."""
    err = np.abs(np.asarray(pred_s) - np.asarray(wait_s))
    return float(np.mean(err <= allowed_error_s(pred_s)))


def paired_bootstrap_ci(
    err_a: np.ndarray,
    err_b: np.ndarray,
    *,
    rng: np.random.Generator,
    n_boot: int = 1000,
    level: float = 0.95,
    chunk: int = 50,
) -> dict[str, float]:
    """Paired bootstrap interval of ``AAE(a) - AAE(b)`` from per-job absolute errors.

    Jobs are resampled with replacement (the same draw for both methods, hence "paired");
    returns the observed difference and the ``level`` percentile interval (seconds).
    """
    diff = np.asarray(err_a, dtype=float) - np.asarray(err_b, dtype=float)
    n = diff.size
    means = np.empty(n_boot)
    for lo in range(0, n_boot, chunk):
        size = min(chunk, n_boot - lo)
        idx = rng.integers(0, n, size=(size, n), dtype=np.int32 if n < 2**31 else np.int64)
        means[lo : lo + size] = diff[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return {"diff_s": float(diff.mean()), "lo_s": float(low), "hi_s": float(high)}


def summarise(
    pred_s: np.ndarray,
    wait_s: np.ndarray,
    run_s: np.ndarray,
    *,
    predictor: np.ndarray | None = None,
    upper_s: np.ndarray | None = None,
) -> dict[str, Any]:
    """All per-method numbers of the evaluation table (JSON-ready)."""
    pred_s = np.asarray(pred_s, dtype=float)
    wait_s = np.asarray(wait_s, dtype=float)
    err = aae(pred_s, wait_s)
    mean_wait = float(wait_s.mean())
    out: dict[str, Any] = {
        "jobs": int(wait_s.size),
        "aae_s": err,
        "aae_h": err / 3600.0,
        "scaled_aae": scaled_aae(pred_s, wait_s, run_s),
        "mean_wait_s": mean_wait,
        "aae_over_mean_wait": err / mean_wait if mean_wait > 0 else None,
        "correct_share": correct_share(pred_s, wait_s),
        "aae_by_class": aae_by_class(pred_s, wait_s),
    }
    if predictor is not None:
        names, counts = np.unique(np.asarray(predictor, dtype=str), return_counts=True)
        out["predictor_mix"] = {
            str(k): float(c) / wait_s.size for k, c in zip(names, counts, strict=True)
        }
    if upper_s is not None:
        out["upper_aae_s"] = aae(upper_s, wait_s)
        out["upper_coverage"] = float(np.mean(wait_s <= np.asarray(upper_s)))
    return out
