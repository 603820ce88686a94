"""The the paper's load-function rangeSet method as a runtime method (:mod:`.types` contract).

"End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs", section on
runtime prediction: the relevant history of the request's tuple (falling back to its user,
then its size, then every job), each history job shifted through the load functions to the
predicted load, compacted, merged and weighted into a rangeSet
(:func:`predictor.core.runtime.rangeset.build_rangeset`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from predictor.core.runtime.base import Progress, RuntimeEstimator
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.load_functions import LoadFunction, fit_load_functions
from predictor.core.runtime.params import LEVELS, RuntimeParams
from predictor.core.runtime.rangeset import RangeSet, build_rangeset, relevant_count
from predictor.core.runtime.targets import RuntimeTargets
from predictor.core.runtime.types import RuntimePrediction


class RangeSetPredictor(RuntimeEstimator):
    """Load-function rangeSets (the paper "End-to-End Predictions-Based Resource Management
    Framework for Supercomputer Jobs"). ``fit`` learns the load functions on the
    tuning part only; ``predict_one`` answers for any request at any time t."""

    name = "rangeset"

    def __init__(self, **params: Any) -> None:
        for name, value in params.items():  # fields of RuntimeParams (the contract)
            setattr(self, name, value)

    def settings(self, ctx: RuntimeContext) -> RuntimeParams:
        """The context's :class:`RuntimeParams`, with the fields given to ``__init__``."""
        given = self.get_params()
        return replace(ctx.params, **given) if given else ctx.params

    def _learn(self, ctx: RuntimeContext) -> None:
        params = self.settings(ctx)
        tune = slice(0, ctx.n_tune)
        self.functions_: list[LoadFunction] = (
            fit_load_functions(ctx.jobs.iloc[tune], ctx.actual_load[tune], params)
            if params.use_load_functions
            else []
        )
        self.slopes_ = np.array([f.slope for f in self.functions_])
        self.intercepts_ = np.array([f.intercept for f in self.functions_])

    def fitted_info(self) -> dict[str, Any]:
        return {"load_functions": len(self.functions_)}

    def predict_one(
        self,
        ctx: RuntimeContext,
        codes: dict[str, int],
        t: float,
        requested_s: float,
        target_load: float,
    ) -> RangeSet:
        """The rangeSet for a request with level ``codes`` (see ``RuntimeContext``) at t."""
        level, rows = relevant_history(ctx, codes, t)
        return self._from_history(ctx, level, rows, requested_s, target_load)

    def _from_history(
        self, ctx: RuntimeContext, level: str, rows: np.ndarray, requested_s: float,
        target_load: float,
    ) -> RangeSet:  # fmt: skip
        params = self.settings(ctx)
        if not rows.size:
            upper = requested_s if requested_s > 0 else params.min_runtime_s
            return RangeSet(
                np.array([params.min_runtime_s]),
                np.array([upper]),
                np.array([1.0]),
                level="none",
                support=0,
            )
        runs = ctx.run_s[rows]
        n = relevant_count(runs, params.history_start, params.history_overlap)
        return build_rangeset(
            runs[:n],
            ctx.actual_load[rows[:n]],
            runs,
            float(target_load),
            requested_s,
            (self.slopes_, self.intercepts_),
            params,
            level=level,
        )

    def _predict(self, targets: RuntimeTargets, progress: Progress) -> RuntimePrediction:
        """One rangeSet per target. Each target's answering history (the first level with
        ended jobs) is found for all targets at once (:func:`history_slices`); targets whose
        history is the same slice with the same requested time and load get the same
        rangeSet, built once (a molding arrival's candidate sizes often fall back to their
        user's history)."""
        ctx = self.history_
        level, lo, hi = history_slices(ctx, targets.codes, targets.t_s)
        names = (*LEVELS, "all", "none")
        req, load = targets.req_time_s.tolist(), np.asarray(targets.load, dtype=float).tolist()
        out = []
        built: dict[tuple, RangeSet] = {}
        step = max(len(targets) // 200, 1)
        for k, (lv, a, b) in enumerate(zip(level.tolist(), lo.tolist(), hi.tolist(), strict=True)):
            key = (lv, a, b, req[k], load[k])
            if key not in built:
                order = ctx.levels[names[lv]].order if lv < len(names) - 1 else np.empty(0, int)
                rows = order[a:b][::-1]  # most recent first
                built[key] = self._from_history(ctx, names[lv], rows, req[k], load[k])
            out.append(built[key])
            if progress is not None and k % step == 0:
                progress(k / len(targets))
        return RuntimePrediction(out)


def relevant_history(
    ctx: RuntimeContext, codes: dict[str, int], t: float
) -> tuple[str, np.ndarray]:
    """The first level (tuple, user, size, all) with jobs ended before t, and those rows,
    most recent first; ``("none", empty)`` when no job has ended."""
    for level in (*LEVELS, "all"):
        rows = ctx.levels[level].history(codes[level], t)[::-1]  # most recent first
        if rows.size:
            return level, rows
    return "none", np.empty(0, dtype=np.int64)


def history_slices(
    ctx: RuntimeContext, codes: dict[str, np.ndarray], t_s: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`relevant_history` for many targets at once: per target the index of its level
    in ``LEVELS + ("all",)`` (that length when no job has ended: ``none``) and its slice
    ``[lo, hi)`` of that level's :attr:`GroupIndex.order` (oldest end first)."""
    names = (*LEVELS, "all")
    t = np.asarray(t_s, dtype=float)
    level = np.full(t.shape, len(names))
    lo = np.zeros(t.shape, dtype=np.int64)
    hi = np.zeros(t.shape, dtype=np.int64)
    for i in range(len(names) - 1, -1, -1):  # the first level with history wins
        a, b = ctx.levels[names[i]].bounds(codes[names[i]], t)
        has = b > a
        level, lo, hi = np.where(has, i, level), np.where(has, a, lo), np.where(has, b, hi)
    return level, lo, hi
