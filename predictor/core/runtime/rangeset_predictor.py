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
        params = self.settings(ctx)
        for level in (*LEVELS, "all"):
            rows = ctx.levels[level].history(codes[level], t)[::-1]  # most recent first
            if rows.size:
                break
        else:
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
        ctx = self.history_
        out = []
        step = max(len(targets) // 200, 1)
        for k in range(len(targets)):
            codes = {level: int(c[k]) for level, c in targets.codes.items()}
            out.append(
                self.predict_one(
                    ctx, codes, float(targets.t_s[k]), float(targets.req_time_s[k]), targets.load[k]
                )
            )
            if progress is not None and k % step == 0:
                progress(k / len(targets))
        return RuntimePrediction(out)
