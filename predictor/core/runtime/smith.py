"""Smith, Foster and Taylor's template-based runtime prediction.

A template is a subset of job attributes (user, group, queue, executable, request size in
power-of-two ranges, requested time in power-of-two ranges). A job's category under a
template holds the past jobs with the same values; a category with ``n >= 2`` finished jobs
predicts their mean with a 90 % confidence interval ``mean +- t_{0.95, n-1} s / sqrt(n)``;
the template with the smallest interval answers. The template set is found by a greedy
search on the tuning part (add the template that lowers the mean absolute error most, stop
when none does). Category statistics come from prefix sums over (category, end time), so
every job is answered at its own submit time in O(log n).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from predictor.core.runtime.history import GroupIndex, RuntimeContext
from predictor.core.runtime.peers import RangePrediction, aae_range, global_past_mean

ATTRIBUTES = ("user_id", "group_id", "queue_id", "executable_id", "size_range", "time_range")


def attribute_frame(ctx: RuntimeContext) -> pd.DataFrame:
    """The template attributes of every job (ranges are power-of-two buckets)."""
    req = ctx.req_time_s
    return pd.DataFrame(
        {
            "user_id": ctx.keys["user_id"].to_numpy(),
            "group_id": ctx.keys["group_id"].to_numpy(),
            "queue_id": ctx.keys["queue_id"].to_numpy(),
            "executable_id": ctx.jobs["executable_id"].to_numpy(dtype=np.int64),
            "size_range": np.floor(np.log2(np.maximum(ctx.size, 1))).astype(np.int64),
            "time_range": np.where(req > 0, np.floor(np.log2(np.maximum(req, 1))), -1).astype(
                np.int64
            ),
        }
    )


def template_stats(
    attrs: pd.DataFrame,
    end_s: np.ndarray,
    run_s: np.ndarray,
    template: tuple[str, ...],
    rows: np.ndarray,
    t: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and 90 % CI width of each row's category (jobs ended before t); inf width when
    the category has fewer than 2 jobs."""
    index = GroupIndex(attrs[list(template)], end_s)
    lo, hi = index.bounds(index.codes[rows], t)
    n = (hi - lo).astype(float)
    s1 = index.prefix_sums(run_s)
    s2 = index.prefix_sums(run_s**2)
    total, total_sq = s1[hi] - s1[lo], s2[hi] - s2[lo]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / n
        var = np.maximum(total_sq - n * mean**2, 0.0) / (n - 1)
        half = stats.t.ppf(0.95, np.maximum(n - 1, 1)) * np.sqrt(var / n)
    width = np.where(n >= 2, 2.0 * half, np.inf)
    return np.where(n >= 1, mean, np.nan), width


def choose(means: np.ndarray, widths: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Per column (job), the mean of the template (row) with the smallest finite CI."""
    if means.size == 0:
        return fallback
    best = np.argmin(widths, axis=0)
    pick = means[best, np.arange(means.shape[1])]
    ok = np.isfinite(widths[best, np.arange(means.shape[1])])
    return np.where(ok, pick, fallback)


class SmithTemplates:
    """Smith-Foster-Taylor predictor; ``fit`` runs the greedy template search."""

    def __init__(self, max_templates: int = 6) -> None:
        self.max_templates = max_templates

    def _fallback(self, ctx: RuntimeContext, rows: np.ndarray) -> np.ndarray:
        req = ctx.req_time_s[rows]
        return np.where(req > 0, req, global_past_mean(ctx, rows))

    def fit(self, ctx: RuntimeContext) -> SmithTemplates:
        attrs = attribute_frame(ctx)
        tune = np.arange(ctx.n_tune)
        tune = tune[ctx.run_s[tune] > 0]
        t = ctx.submit_s[tune]
        fallback = self._fallback(ctx, tune)
        candidates = [c for r in range(1, len(ATTRIBUTES) + 1) for c in combinations(ATTRIBUTES, r)]
        table = {
            c: template_stats(attrs, ctx.known_end_s, ctx.run_s, c, tune, t) for c in candidates
        }
        chosen: list[tuple[str, ...]] = []
        best_err = float(np.mean(np.abs(fallback - ctx.run_s[tune]))) if tune.size else 0.0
        while len(chosen) < self.max_templates:
            scores = {}
            for cand in candidates:
                if cand in chosen:
                    continue
                use = [*chosen, cand]
                pred = choose(
                    np.array([table[c][0] for c in use]),
                    np.array([table[c][1] for c in use]),
                    fallback,
                )
                scores[cand] = float(np.mean(np.abs(pred - ctx.run_s[tune])))
            if not scores or min(scores.values()) >= best_err:
                break
            winner = min(scores, key=scores.get)
            chosen.append(winner)
            best_err = scores[winner]
        self.templates_ = chosen
        self.tune_mae_ = best_err
        return self

    def points(self, ctx: RuntimeContext, rows: np.ndarray) -> np.ndarray:
        attrs = attribute_frame(ctx)
        t = ctx.submit_s[rows]
        got = [
            template_stats(attrs, ctx.known_end_s, ctx.run_s, c, rows, t) for c in self.templates_
        ]
        means = np.array([g[0] for g in got]).reshape(len(got), rows.size)
        widths = np.array([g[1] for g in got]).reshape(len(got), rows.size)
        return choose(means, widths, self._fallback(ctx, rows))

    def predict(self, ctx: RuntimeContext, rows: np.ndarray) -> RangePrediction:
        return aae_range(ctx, rows, self.points(ctx, np.arange(len(ctx.run_s))))
