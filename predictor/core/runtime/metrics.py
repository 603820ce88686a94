"""Metrics of runtime predictions (the paper "End-to-End Predictions-Based Resource Management
Framework for Supercomputer Jobs", evaluation of rangeSets; "Metrics").

success rate: share of targets whose actual runtime lies in one of the predicted ranges.
coverage: total length of the predicted ranges over the length of the baseline range, as a
fraction; ``coverage`` is the ratio of the summed lengths (jobs whose baseline range has a
positive length), ``coverage_median`` the median of the per-job ratios.
aae_s: mean absolute error of the point predictions (seconds); mean_pct_error: mean of
``|point - actual| / actual`` (a fraction).
"""

from __future__ import annotations

import numpy as np


def runtime_metrics(
    actual_s: np.ndarray,
    success: np.ndarray,
    length_s: np.ndarray,
    baseline_length_s: np.ndarray,
    point_s: np.ndarray,
) -> dict[str, float | int]:
    """All metrics of one method on the same targets (arrays aligned, shape (n,))."""
    actual_s = np.asarray(actual_s, dtype=float)
    n = int(actual_s.size)
    if n == 0:
        return {
            "jobs": 0,
            "success_rate": float("nan"),
            "coverage": float("nan"),
            "coverage_median": float("nan"),
            "aae_s": float("nan"),
            "mean_pct_error": float("nan"),
        }
    base = np.asarray(baseline_length_s, dtype=float)
    length = np.asarray(length_s, dtype=float)
    has_base = base > 0
    err = np.abs(np.asarray(point_s, dtype=float) - actual_s)
    return {
        "jobs": n,
        "success_rate": float(np.mean(success)),
        "coverage": float(length[has_base].sum() / base[has_base].sum())
        if has_base.any()
        else float("nan"),
        "coverage_median": float(np.median(length[has_base] / base[has_base]))
        if has_base.any()
        else float("nan"),
        "aae_s": float(err.mean()),
        "mean_pct_error": float(np.mean(err / actual_s)),
    }
