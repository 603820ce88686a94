"""Which runtime method a site answers with: the one of best success at a coverage ceiling.

Seed 002 ("End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs",
section on runtime prediction) scores a rangeSet by *success* (the actual runtime lies in one
of its ranges) and *coverage* (summed range length over the summed length of the baseline
``[min, max]`` of the tuple's past runtimes, :mod:`predictor.core.runtime.metrics`). A longer
range always succeeds more, so methods are compared at a coverage ceiling: among the
candidates with coverage ``<= ceiling`` the highest success wins (ties: the first listed);
when none stays under it, the one of lowest coverage.

Measured on the tuning part only ("dev"): every candidate is fitted with the first half of
the tuning part as its own tuning part and answers up to ``max_dev`` jobs of the second half,
each at its own arrival (history = jobs ended before it). The chosen method is then fitted on
the whole tuning part by the caller. Range probabilities are checked on the same dev jobs
(expected calibration error, :mod:`predictor.core.runtime.calibration`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from predictor.core.runtime.calibration import expected_calibration_error, fit_calibration
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.peers import BaselineRange
from predictor.core.runtime.types import RuntimePrediction

RUNTIME_CANDIDATES = ("density", "rangeset", "quantile")
COVERAGE_CEILING = 0.25


@dataclass(frozen=True)
class Score:
    """One method on the dev jobs: success, coverage, and ECE of its range probabilities."""

    success: float
    coverage: float
    ece: float = float("nan")


@dataclass(frozen=True)
class Choice:
    """The chosen runtime method and why.

    name : registry name; params : its ``get_params()``; fitted : what its dev fit learned.
    tuning_success, tuning_coverage, tuning_ece : its dev figures; scores : every candidate's.
    calibration : knots of the isotonic map from its stated range probabilities to how often
    they held on the dev jobs (:func:`predictor.core.runtime.calibration.fit_calibration`).
    reason : "best success at coverage <= ceiling" or "lowest coverage (none under ceiling)".
    """

    name: str
    params: dict[str, Any]
    tuning_success: float
    tuning_coverage: float
    tuning_ece: float
    ceiling: float
    dev_jobs: int
    reason: str
    scores: dict[str, Score] = field(default_factory=dict)
    fitted: dict[str, Any] = field(default_factory=dict)
    calibration: tuple[list[float], list[float]] = ([0.0, 1.0], [0.0, 1.0])

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["scores"] = {k: asdict(v) for k, v in self.scores.items()}
        return out


def pick(scores: Mapping[str, Score], ceiling: float = COVERAGE_CEILING) -> tuple[str, str]:
    """Name and reason of the choice among ``scores`` (module docstring)."""
    if not scores:
        raise ValueError("no candidate scores to choose from")
    names = list(scores)
    under = [n for n in names if scores[n].coverage <= ceiling]
    if under:
        best = max(under, key=lambda n: (scores[n].success, -names.index(n)))
        return best, f"best success at coverage <= {ceiling:.0%}"
    best = min(names, key=lambda n: (scores[n].coverage, names.index(n)))
    return best, f"lowest coverage (none under {ceiling:.0%})"


def score(pred: RuntimePrediction, run_s: np.ndarray, baseline_length_s: np.ndarray) -> Score:
    """Success, coverage against the baseline lengths, and ECE of the range probabilities."""
    run = np.asarray(run_s, dtype=float)
    base = np.asarray(baseline_length_s, dtype=float)
    length = pred.length_s
    has = base > 0
    coverage = float(length[has].sum() / base[has].sum()) if has.any() else float("nan")
    prob, hit = range_outcomes(pred, run)
    return Score(
        success=float(np.mean(pred.contains(run))) if run.size else float("nan"),
        coverage=coverage,
        ece=expected_calibration_error(prob, hit) if prob.size else float("nan"),
    )


def range_outcomes(pred: RuntimePrediction, run_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every range's stated probability and whether the job's actual runtime fell in it."""
    if not len(pred):
        return np.zeros(0), np.zeros(0, bool)
    prob = np.concatenate([r.probability for r in pred.ranges])
    hit = np.concatenate(
        [(r.low_s <= a) & (a <= r.high_s) for r, a in zip(pred.ranges, run_s, strict=True)]
    )
    return prob, hit


def dev_split(ctx: RuntimeContext, max_dev: int = 3000) -> tuple[RuntimeContext, np.ndarray]:
    """The dev context (tuning part = first half of ``ctx``'s) and up to ``max_dev`` evenly
    spread rows of the second half with a positive runtime."""
    half = ctx.n_tune // 2
    rows = np.arange(half, ctx.n_tune)
    rows = rows[ctx.run_s[rows] > 0]
    if rows.size > max_dev:
        rows = rows[np.unique(np.linspace(0, rows.size - 1, max_dev).round().astype(np.int64))]
    dev = copy.copy(ctx)  # same arrays, shorter tuning part
    dev.n_tune = half
    return dev, rows.astype(np.int64)


def choose_runtime_method(
    ctx: RuntimeContext,
    make: Callable[[str, int | None], Any],
    candidates: Sequence[str] = RUNTIME_CANDIDATES,
    *,
    ceiling: float = COVERAGE_CEILING,
    max_dev: int = 3000,
    random_state: int | None = 0,
) -> Choice:
    """Score every candidate on the tuning part's dev jobs and pick (module docstring).

    ``make(name, random_state)`` builds a fresh method (the registry's ``make_method``).
    """
    if not 0.0 < ceiling <= 1.0:
        raise ValueError(f"ceiling must lie in (0, 1], got {ceiling}")
    names = list(dict.fromkeys(candidates))
    if not names:
        raise ValueError("no runtime candidates given")
    dev, rows = dev_split(ctx, max_dev)
    if rows.size == 0:
        raise ValueError(
            f"no dev jobs: the second half of the {ctx.n_tune}-job tuning part has no "
            "job with a positive runtime"
        )
    base = BaselineRange().fit(dev).predict_rows(rows).length_s
    run = ctx.run_s[rows]
    scores: dict[str, Score] = {}
    fitted: dict[str, dict[str, Any]] = {}
    outcomes = {}
    for name in names:
        model = make(name, random_state).fit(dev)
        pred = model.predict_rows(rows)
        scores[name] = score(pred, run, base)
        outcomes[name] = range_outcomes(pred, run)
        fitted[name] = model.fitted_info()
    best, reason = pick(scores, ceiling)
    s = scores[best]
    return Choice(
        name=best, params=make(best, random_state).get_params(), tuning_success=s.success,
        tuning_coverage=s.coverage, tuning_ece=s.ece, ceiling=ceiling, dev_jobs=int(rows.size),
        reason=reason, scores=scores, fitted=fitted[best],
        calibration=fit_calibration(*outcomes[best]),
    )  # fmt: skip
