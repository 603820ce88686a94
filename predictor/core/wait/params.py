"""All APQ defaults in one place (docs/apq.md; the paper "End-to-End Predictions-Based Resource
Management Framework for Supercomputer Jobs", "Queue waiting time").

Every number is a default, not a law: change one only with a measurement, and write the
measurement in ``docs/apq.md``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class APQParams:
    """Settings of the APQ wait predictor.

    History and structure (docs/apq.md, "History and structure"):
    history_size : the most recent started jobs of the same queue used as history.
    nearest_fraction, nearest_extra : the ``1% + 1`` nearest history jobs that DBSCAN clusters.
    dbscan_eps, dbscan_min_samples : DBSCAN on ``|wait_a - wait_b| / wait_range + |D_a - D_b|``.
    good_no_outlier_mean_d : structure good if no outliers and mean D below this ...
    good_mean_d, good_outlier_ratio : ... or mean D <= good_mean_d and
        outliers < good_outlier_ratio x mean cluster size.

    Predictors (docs/apq.md, "The three predictors"):
    window_width, window_max_start : stddev minimiser windows over D.
    radius_start, radius_step, radius_max, jobs_per_feature, ridge_alpha : regression.
    k_candidates : k of the exp(-D)-weighted average, chosen on the tuning part.
    k : a fixed k (skips that choice), or None to choose it in ``fit``.
    chain : what answers when the structure check finds no good window: "spec" (ridge
        regression, then the weighted average of k nearest) or "median" (the exp(-D)-weighted
        median of the k nearest, k among ``median_k_candidates``); None = choose in ``fit``
        by AAE on the tuning part (docs/apq.md has the measurement behind this option).

    Distances (docs/apq.md, "Distance ..."):
    hist_bins : bins per histogram.
    hist_mode : "fixed" (per-trace log-scale bins, precomputed; the default, see docs/apq.md)
        or "union" (10 equal-width bins over the union of both value sets, as the spec says).
    weight_every_rows : adaptive weights are recomputed at every multiple of this many rows.
    user_weight_keep : user features (3-10) keep only weights >= this x the group's largest.

    Distributions vs summaries (chosen in ``fit`` on the tuning part):
    spread_quantiles : candidate thresholds on the histogram-distance spread, as quantiles
        of the spreads seen on the tuning targets (0 = always distributions, 1 = never).
    spread_threshold : a fixed threshold (skips that choice; inf = always summaries,
        -inf = always distributions), or None to choose it in ``fit``.
    tune_targets : at most this many tuning-part targets evaluated to choose k and the rule.

    Fallback (docs/apq.md, "Never answer 0 just because there was too little history"):
    min_history : fewer history jobs than this -> median wait of recent same-size-class jobs.
    fallback_recent : how many recent same-class jobs that median uses.
    size_class_edges : processor classes (1-4, 5-16, 17-64, 65+), as in QBETS.

    Online guard (:mod:`predictor.core.wait.apq_guard`, docs/apq.md "The online guard"):
    guard : answer the fallback when APQ's recent errors on already-resolved targets exceed
        the fallback's (off by default: see docs/apq.md for the measurement).
    guard_fallback : "zero" (0 s) or "median" (recent size-class median, ``fallback_recent``).
    guard_scope : "user" (the target user's resolved targets) or "all" (every user's).
    guard_window, guard_factor, guard_min_resolved : the last ``guard_window`` resolved
        targets; switch when APQ's mean error > ``guard_factor`` x the fallback's, given at
        least ``guard_min_resolved`` of them. Fixed a priori, never tuned on the test part.
    """

    history_size: int = 4000
    nearest_fraction: float = 0.01
    nearest_extra: int = 1
    dbscan_eps: float = 0.04
    dbscan_min_samples: int = 2
    good_no_outlier_mean_d: float = 0.3
    good_mean_d: float = 0.2
    good_outlier_ratio: float = 0.3
    window_width: float = 0.04
    window_max_start: float = 0.2
    radius_start: float = 0.6
    radius_step: float = 0.1
    radius_max: float = 1.0
    jobs_per_feature: int = 10
    ridge_alpha: float = 0.1
    k_candidates: tuple[int, ...] = (1, 5, 10)
    k: int | None = None
    chain: str | None = None
    median_k_candidates: tuple[int, ...] = (5, 10, 25)
    hist_bins: int = 10
    hist_mode: str = "fixed"
    weight_every_rows: int = 100
    user_weight_keep: float = 0.9
    spread_quantiles: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    spread_threshold: float | None = None
    tune_targets: int = 1500
    min_history: int = 50
    fallback_recent: int = 100
    size_class_edges: tuple[int, ...] = field(default=(4, 16, 64))
    guard: bool = False
    guard_fallback: str = "zero"
    guard_scope: str = "user"
    guard_window: int = 20
    guard_factor: float = 1.5
    guard_min_resolved: int = 5

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
