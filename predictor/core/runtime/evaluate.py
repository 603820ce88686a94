"""Evaluation harness for runtime prediction: every method on the same target jobs.

Split (same rules as the wait evaluation): jobs sorted by submit time; the first
``tune_fraction`` form the tuning part (load functions, Smith templates); the targets are
the later jobs with a positive runtime, optionally ``limit`` of them evenly spread. History
for a target at t is every job (tuning or test) that ended before t (see
``predictor.core.runtime.history``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from predictor.core import chunks
from predictor.core.runtime.calibration import expected_calibration_error, reliability_table
from predictor.core.runtime.choose import range_outcomes
from predictor.core.runtime.history import RuntimeContext, build_context
from predictor.core.runtime.metrics import runtime_metrics
from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.registry import METHODS, REFERENCE, make_method, parse_methods

Progress = Callable[[float], None] | None


def select_targets(ctx: RuntimeContext, limit: int | None = None) -> np.ndarray:
    """Test rows with a positive runtime; ``limit`` of them evenly spread over the test part."""
    rows = np.arange(ctx.n_tune, len(ctx.run_s))
    rows = rows[ctx.run_s[rows] > 0]
    if limit is not None and 0 < limit < rows.size:
        rows = rows[np.unique(np.linspace(0, rows.size - 1, limit).round().astype(int))]
    return rows


def run_method(
    name: str,
    ctx: RuntimeContext,
    rows: np.ndarray,
    progress: Progress = None,
    seed: int = 0,
    n_jobs: int = 1,
    runner: chunks.ChunkRunner | None = None,
) -> dict:
    """Fit ``name`` on the context, answer ``rows`` (in ``n_jobs`` worker processes, or by
    ``runner``: ``predictor.core.chunks``): success, length, point and what answered."""
    model = make_method(name, seed).fit(ctx)
    pred = chunks.predict_rows(
        model, rows, jobs=n_jobs, progress=progress, runner=runner, name=name
    )
    prob, hit = range_outcomes(pred, ctx.run_s[rows])
    return {
        "success": pred.contains(ctx.run_s[rows]),
        "length": pred.length_s,
        "point": pred.point_s,
        "extra": {
            "levels": dict(Counter(pred.level.tolist())),
            "mean_ranges": float(np.mean([r.low_s.size for r in pred.ranges] or [0])),
            "reliability": reliability_table(prob, hit),
            "ece": expected_calibration_error(prob, hit) if prob.size else None,
            **model.fitted_info(),
        },
    }


def evaluate_runtime(
    jobs: pd.DataFrame,
    machine_procs: float,
    methods: tuple[str, ...] | None = None,
    params: RuntimeParams | None = None,
    limit: int | None = None,
    progress: Progress = None,
    n_jobs: int = 1,
    runner: chunks.ChunkRunner | None = None,
) -> dict[str, Any]:
    """Run ``methods`` on the same targets; returns ``{"methods": {name: metrics}, ...}``.

    Metrics per method: see ``predictor.core.runtime.metrics``; ``seconds`` is its wall time.
    """
    methods = tuple(parse_methods(methods))
    started = time.perf_counter()
    ctx = build_context(jobs, machine_procs, params)
    rows = select_targets(ctx, limit)
    prepared_s = time.perf_counter() - started
    order = [REFERENCE, *[m for m in methods if m != REFERENCE]]
    outputs: dict[str, dict] = {}
    for i, name in enumerate(order):
        sub = None if progress is None else _sub_progress(progress, i, len(order))
        t0 = time.perf_counter()
        outputs[name] = run_method(name, ctx, rows, sub, n_jobs=n_jobs, runner=runner)
        outputs[name]["seconds"] = time.perf_counter() - t0
    base_len = outputs[REFERENCE]["length"]
    results = {
        name: {
            **runtime_metrics(
                ctx.run_s[rows], out["success"], out["length"], base_len, out["point"]
            ),
            "seconds": round(out["seconds"], 2),
            **out["extra"],
        }
        for name, out in outputs.items()
        if name in methods
    }
    return {
        "methods": results,
        "n_jobs": len(ctx.run_s),
        "n_tune": ctx.n_tune,
        "n_targets": int(rows.size),
        "machine_procs": ctx.machine_procs,
        "params": ctx.params.as_dict(),
        "prepare_s": round(prepared_s, 2),
        "total_s": round(time.perf_counter() - started, 2),
    }


def _sub_progress(progress: Callable[[float], None], i: int, n: int) -> Callable[[float], None]:
    return lambda f: progress((i + min(max(f, 0.0), 1.0)) / n)


__all__ = ["METHODS", "evaluate_runtime", "run_method", "select_targets"]
