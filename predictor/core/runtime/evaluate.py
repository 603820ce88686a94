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

from predictor.core.runtime.history import RuntimeContext, build_context
from predictor.core.runtime.metrics import runtime_metrics
from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.peers import (
    BaselineRange,
    LiKnnPredictor,
    QuantileGBRange,
    RequestedTime,
    TsafrirPredictor,
)
from predictor.core.runtime.rangeset import RangeSetPredictor
from predictor.core.runtime.smith import SmithTemplates

METHODS = ("rangeset", "baseline", "smith", "li", "tsafrir", "requested", "quantile")
Progress = Callable[[float], None] | None


def select_targets(ctx: RuntimeContext, limit: int | None = None) -> np.ndarray:
    """Test rows with a positive runtime; ``limit`` of them evenly spread over the test part."""
    rows = np.arange(ctx.n_tune, len(ctx.run_s))
    rows = rows[ctx.run_s[rows] > 0]
    if limit is not None and 0 < limit < rows.size:
        rows = rows[np.unique(np.linspace(0, rows.size - 1, limit).round().astype(int))]
    return rows


def run_rangeset(ctx: RuntimeContext, rows: np.ndarray, progress: Progress = None) -> dict:
    """Success, length and point of the rangeSet method, plus its fallback levels."""
    model = RangeSetPredictor().fit(ctx)
    success, length, point, levels, counts = [], [], [], Counter(), []
    step = max(rows.size // 200, 1)
    for i, start in enumerate(range(0, rows.size, step)):
        for rs, r in zip(
            model.predict_rows(ctx, rows[start : start + step]),
            rows[start : start + step],
            strict=True,
        ):
            success.append(rs.contains(ctx.run_s[r]))
            length.append(rs.length_s)
            point.append(rs.point_s)
            levels[rs.level] += 1
            counts.append(rs.low_s.size)
        if progress is not None:
            progress(min(1.0, (i + 1) * step / max(rows.size, 1)))
    return {
        "success": np.array(success, dtype=bool),
        "length": np.array(length),
        "point": np.array(point),
        "extra": {
            "levels": dict(levels),
            "mean_ranges": float(np.mean(counts or [0])),
            "load_functions": len(model.functions_),
        },
    }


def run_peer(name: str, ctx: RuntimeContext, rows: np.ndarray, progress: Progress = None) -> dict:
    """Success, length and point of a single-range peer."""
    model = {
        "baseline": BaselineRange,
        "smith": SmithTemplates,
        "li": LiKnnPredictor,
        "tsafrir": TsafrirPredictor,
        "requested": RequestedTime,
        "quantile": QuantileGBRange,
    }[name]().fit(ctx)
    kwargs = {"progress": progress} if name in ("li", "quantile") else {}
    pred = model.predict(ctx, rows, **kwargs)
    actual = ctx.run_s[rows]
    extra = {"templates": [list(t) for t in model.templates_]} if name == "smith" else {}
    return {
        "success": (pred.low_s <= actual) & (actual <= pred.high_s),
        "length": pred.high_s - pred.low_s,
        "point": pred.point_s,
        "extra": extra,
    }


def evaluate_runtime(
    jobs: pd.DataFrame,
    machine_procs: float,
    methods: tuple[str, ...] = METHODS,
    params: RuntimeParams | None = None,
    limit: int | None = None,
    progress: Progress = None,
) -> dict[str, Any]:
    """Run ``methods`` on the same targets; returns ``{"methods": {name: metrics}, ...}``.

    Metrics per method: see ``predictor.core.runtime.metrics``; ``seconds`` is its wall time.
    """
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown methods: {sorted(unknown)}; known: {list(METHODS)}")
    started = time.perf_counter()
    ctx = build_context(jobs, machine_procs, params)
    rows = select_targets(ctx, limit)
    prepared_s = time.perf_counter() - started
    order = ["baseline", *[m for m in methods if m != "baseline"]]
    outputs: dict[str, dict] = {}
    for i, name in enumerate(order):
        sub = None if progress is None else _sub_progress(progress, i, len(order))
        t0 = time.perf_counter()
        run = run_rangeset if name == "rangeset" else lambda c, r, p, n=name: run_peer(n, c, r, p)
        outputs[name] = run(ctx, rows, sub)
        outputs[name]["seconds"] = time.perf_counter() - t0
    base_len = outputs["baseline"]["length"]
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
