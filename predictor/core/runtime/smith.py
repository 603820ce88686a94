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
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from predictor.core.runtime.base import Progress
from predictor.core.runtime.history import GroupIndex, RuntimeContext, slice_sums
from predictor.core.runtime.peers import PointMethod, requested_or_mean
from predictor.core.runtime.targets import RuntimeTargets
from predictor.core.state.request import RequestBatch

ATTRIBUTES = ("user_id", "group_id", "queue_id", "executable_id", "size_range", "time_range")


def attribute_frame(requests: RequestBatch) -> pd.DataFrame:
    """The template attributes of each request (ranges are power-of-two buckets)."""
    req = requests.req_time_s
    return pd.DataFrame(
        {
            "user_id": requests.user,
            "group_id": requests.group,
            "queue_id": requests.queue,
            "executable_id": requests.executable,
            "size_range": np.floor(np.log2(np.maximum(requests.procs, 1))).astype(np.int64),
            "time_range": np.where(req > 0, np.floor(np.log2(np.maximum(req, 1))), -1).astype(
                np.int64
            ),
        }
    )


def template_stats(
    index: GroupIndex,
    codes: np.ndarray,
    t: np.ndarray,
    sums: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and 90 % CI width of each target's category (its ``codes`` in ``index``, jobs
    ended before t); inf width when the category has fewer than 2 jobs. ``sums`` are the
    prefix sums of runtimes and squared runtimes in the index's order."""
    lo, hi = index.bounds(codes, t)
    n = (hi - lo).astype(float)
    s1, s2 = sums
    total, total_sq = slice_sums(s1, lo, hi), slice_sums(s2, lo, hi)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / n
        var = np.maximum(total_sq - n * mean**2, 0.0) / (n - 1)
        half = stats.t.ppf(0.95, np.maximum(n - 1, 1)) * np.sqrt(var / n)
    width = np.where(n >= 2, 2.0 * half, np.inf)
    return np.where(n >= 1, mean, np.nan), width


class Template:
    """One template over a log: its category index and runtime prefix sums."""

    def __init__(self, attrs: pd.DataFrame, columns: tuple[str, ...], ctx: RuntimeContext) -> None:
        self.columns = columns
        self.index = GroupIndex(attrs[list(columns)], ctx.known_end_s)
        self.sums = (self.index.prefix_sums(ctx.run_s), self.index.prefix_sums(ctx.run_s**2))

    def codes(self, targets: RuntimeTargets, attrs: pd.DataFrame) -> np.ndarray:
        if targets.rows is not None:
            return self.index.codes[targets.rows]
        keys = attrs[list(self.columns)].to_numpy()
        return np.array([self.index.code_of(tuple(k)) for k in keys], dtype=np.int64)

    def stats(self, targets: RuntimeTargets, attrs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        return template_stats(self.index, self.codes(targets, attrs), targets.t_s, self.sums)


def choose(means: np.ndarray, widths: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Per column (job), the mean of the template (row) with the smallest finite CI."""
    if means.size == 0:
        return fallback
    best = np.argmin(widths, axis=0)
    pick = means[best, np.arange(means.shape[1])]
    ok = np.isfinite(widths[best, np.arange(means.shape[1])])
    return np.where(ok, pick, fallback)


class SmithTemplates(PointMethod):
    """Smith-Foster-Taylor predictor; ``fit`` runs the greedy template search."""

    name = "smith"

    def __init__(self, max_templates: int = 6) -> None:
        self.max_templates = max_templates

    def _prepare(self, ctx: RuntimeContext) -> None:
        attrs = attribute_frame(RuntimeTargets.from_rows(ctx, np.arange(len(ctx.run_s))).requests)
        tune = np.arange(ctx.n_tune)
        tune = tune[ctx.run_s[tune] > 0]
        targets = RuntimeTargets.from_rows(ctx, tune)
        fallback = requested_or_mean(ctx, targets)
        candidates = [c for r in range(1, len(ATTRIBUTES) + 1) for c in combinations(ATTRIBUTES, r)]
        table = {c: Template(attrs, c, ctx).stats(targets, attrs.iloc[tune]) for c in candidates}
        chosen: list[tuple[str, ...]] = []
        actual = ctx.run_s[tune]
        best_err = float(np.mean(np.abs(fallback - actual))) if tune.size else 0.0
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
                scores[cand] = float(np.mean(np.abs(pred - actual)))
            if not scores or min(scores.values()) >= best_err:
                break
            winner = min(scores, key=scores.__getitem__)
            chosen.append(winner)
            best_err = scores[winner]
        self.templates_ = chosen
        self.tune_mae_ = best_err
        self.indexes_ = [Template(attrs, c, ctx) for c in chosen]

    def points(self, targets: RuntimeTargets, progress: Progress) -> np.ndarray:
        attrs = attribute_frame(targets.requests)
        got = [tpl.stats(targets, attrs) for tpl in self.indexes_]
        n = len(targets)
        means = np.array([g[0] for g in got]).reshape(len(got), n)
        widths = np.array([g[1] for g in got]).reshape(len(got), n)
        return choose(means, widths, requested_or_mean(self.history_, targets))

    def fitted_info(self) -> dict[str, Any]:
        return {"templates": [list(t) for t in self.templates_]}
