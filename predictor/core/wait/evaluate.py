"""The queue-wait evaluation harness ("Which jobs" and "Metrics").

1. Rows ``[0, n_tune)``, ``n_tune = floor(tune_fraction x n_jobs)`` by submit time, are the
   tuning/warm-up part; every usable row after them (:func:`wait_history.usable_mask`) is a
   test target, or ``limit`` of them evenly spread.
2. Each method is fitted on the context (it may learn from the tuning part only) and predicts
   the very same targets; the per-method numbers come from :func:`wait_metrics.summarise`,
   with a paired bootstrap interval of ``AAE(method) - AAE(apq)`` when APQ ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from predictor.core import chunks
from predictor.core.state.sweep import compute_state
from predictor.core.wait import metrics as wait_metrics
from predictor.core.wait.answer import answer_all, run_order
from predictor.core.wait.history import usable_mask
from predictor.core.wait.local_interval import interval_block
from predictor.core.wait.types import WaitContext, WaitMethod, WaitPrediction

Progress = Callable[[float], None] | None
STATE_SHARE = 0.1  # share of the progress bar given to the state sweep


@dataclass
class TargetSelection:
    """Which rows are scored, and how many rows were left out and why."""

    n_jobs: int
    n_tune: int
    targets: np.ndarray
    test_usable: int
    excluded: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_jobs": self.n_jobs,
            "n_tune": self.n_tune,
            "targets": int(self.targets.size),
            "test_usable": self.test_usable,
            "excluded_in_test": self.excluded,
        }


@dataclass
class Evaluation:
    """Per-method results (JSON-ready) and the raw predictions behind them."""

    selection: TargetSelection
    results: dict[str, dict[str, Any]]
    predictions: dict[str, WaitPrediction] = field(default_factory=dict)
    state_s: float = 0.0


def select_targets(
    jobs: pd.DataFrame, tune_fraction: float, limit: int | None = None
) -> TargetSelection:
    """Test targets after the tuning part (see module docstring)."""
    if not 0.0 <= tune_fraction < 1.0:
        raise ValueError(f"tune_fraction must lie in [0, 1), got {tune_fraction}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    n = len(jobs)
    n_tune = int(np.floor(tune_fraction * n))
    mask, _ = usable_mask(jobs)
    _, excluded = usable_mask(jobs.iloc[n_tune:])
    targets = np.flatnonzero(mask[n_tune:]) + n_tune
    usable = targets.size
    if limit is not None and limit < targets.size:
        targets = targets[np.unique(np.linspace(0, targets.size - 1, limit).round().astype(int))]
    return TargetSelection(n, n_tune, targets, usable, excluded)


def build_context(
    jobs: pd.DataFrame,
    machine_procs: int,
    n_tune: int,
    *,
    state: Any = None,
    progress: Progress = None,
) -> tuple[WaitContext, float]:
    """The shared context; computes the state sweep unless given. Returns it and its seconds."""
    started = time.perf_counter()
    if state is None:
        state = compute_state(jobs, progress=progress)
    ctx = WaitContext(jobs=jobs, state=state, n_tune=n_tune, machine_procs=int(machine_procs))
    return ctx, time.perf_counter() - started


def _scaled(progress: Progress, lo: float, hi: float) -> Progress:
    if progress is None:
        return None
    return lambda f: progress(lo + (hi - lo) * max(0.0, min(1.0, f)))


def candidate_aae(pred: WaitPrediction, wait_s: np.ndarray) -> dict[str, float]:
    """AAE of each inner candidate of a method that reports them (``auto``'s
    ``extra["candidate_<name>_s"]``: the very fitted candidates it weighs, on the same
    targets), so its table row can be read against them."""
    out = {}
    for key, values in pred.extra.items():
        if key.startswith("candidate_") and key.endswith("_s"):
            out[key[len("candidate_") : -2]] = wait_metrics.aae(np.asarray(values), wait_s)
    return out


def evaluate(
    ctx: WaitContext,
    selection: TargetSelection,
    methods: Mapping[str, WaitMethod],
    *,
    seed: int = 0,
    progress: Progress = None,
    n_boot: int = 1000,
    n_jobs: int = 1,
    runner: chunks.ChunkRunner | None = None,
) -> Evaluation:
    """Run every method on ``selection.targets`` and summarise (see module docstring).

    Each method's ``interval`` entry is its online conformal interval at 0.8 and 0.9
    (``predictor.core.wait.local_interval.interval_block``).
    """
    targets = selection.targets
    wait = ctx.jobs["wait_time"].to_numpy(dtype=float)[targets]
    run = ctx.jobs["run_time"].to_numpy(dtype=float)[targets]
    submit = ctx.jobs["submit_time"].to_numpy(dtype=float)[targets]
    results: dict[str, dict[str, Any]] = {}
    preds: dict[str, WaitPrediction] = {}
    n, order = len(methods), run_order(methods)
    parts = {name: _scaled(progress, k / n, (k + 1) / n) for k, name in enumerate(order)}
    apq_err: np.ndarray | None = None
    # each method is summarised as soon as it is answered, while workers answer the next
    for name, pred, timing in answer_all(methods, ctx, targets, parts.__getitem__, n_jobs, runner):
        method = methods[name]
        preds[name] = pred
        results[name] = {
            **wait_metrics.summarise(
                pred.wait_s, wait, run, predictor=pred.predictor, upper_s=pred.upper_s
            ),
            "interval": interval_block(pred.wait_s, wait, submit),
            **timing,
        }
        inner = candidate_aae(pred, wait)
        if inner:
            results[name]["candidates_aae_s"] = inner
        if getattr(method, "rule_choice_", None):  # auto's weight rule, chosen at fit
            results[name]["rule_choice"] = method.rule_choice_  # type: ignore[attr-defined]
        if hasattr(method, "lent"):
            results[name]["reused_answers_of"] = list(method.lent())
            results[name]["reused_fits_of"] = list(getattr(method, "adopted_", []))
        if name == "apq" and targets.size:
            apq_err = np.abs(pred.wait_s - wait)
        if apq_err is None:
            continue
        for peer in [name] if name != "apq" else [n for n in results if n != "apq"]:
            rng = np.random.default_rng(seed)  # same resamples for every peer
            results[peer]["ci_vs_apq"] = wait_metrics.paired_bootstrap_ci(
                np.abs(preds[peer].wait_s - wait), apq_err, rng=rng, n_boot=n_boot
            )
    results = {name: results[name] for name in methods}
    preds = {name: preds[name] for name in methods}
    return Evaluation(selection=selection, results=results, predictions=preds)


def evaluate_trace(
    jobs: pd.DataFrame,
    machine_procs: int,
    methods: Mapping[str, WaitMethod],
    *,
    tune_fraction: float = 0.2,
    limit: int | None = None,
    seed: int = 0,
    state: Any = None,
    progress: Progress = None,
    n_jobs: int = 1,
    runner: chunks.ChunkRunner | None = None,
) -> Evaluation:
    """Select targets, sweep the state, run every method: the command's and the task's entry.

    ``n_jobs`` worker processes (or ``runner``'s workers) answer each method's targets (same
    results as one).
    """
    selection = select_targets(jobs, tune_fraction, limit)
    if selection.targets.size == 0:
        raise ValueError(
            f"no test targets: {selection.test_usable} usable test jobs; "
            f"excluded {selection.excluded}"
        )
    ctx, state_s = build_context(
        jobs,
        machine_procs,
        selection.n_tune,
        state=state,
        progress=_scaled(progress, 0.0, STATE_SHARE),
    )
    out = evaluate(
        ctx, selection, methods, seed=seed, progress=_scaled(progress, STATE_SHARE, 1.0),
        n_jobs=n_jobs, runner=runner,
    )  # fmt: skip
    out.state_s = state_s
    return out
