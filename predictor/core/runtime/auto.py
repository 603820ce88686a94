"""``auto`` for runtimes: the method this site's tuning part chose, answering on its own.

``fit`` runs :func:`predictor.core.runtime.choose.choose_runtime_method` (every candidate
scored on the second half of the tuning part, the best success at coverage <= ``ceiling``
kept), then fits the chosen method on the whole tuning part; ``predict`` is that method's.
``fitted_info`` names the choice and the dev figures behind it, so every answer can say which
method ran.

Calibrated probabilities. A stated range probability should hold that often: the chosen
method's ranges on the dev jobs give an isotonic map from stated to observed frequency
(:func:`predictor.core.runtime.calibration.fit_calibration`, tuning part only), and every
answer's range probabilities go through it (``calibrate=True``). They then sum to the chance
that the runtime lies in *some* range (at most 1); the point estimate stays the chosen
method's own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import Any

from predictor.core.runtime.base import Progress, RuntimeEstimator
from predictor.core.runtime.calibration import apply_calibration
from predictor.core.runtime.choose import (
    COVERAGE_CEILING,
    RUNTIME_CANDIDATES,
    Choice,
    choose_runtime_method,
)
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.targets import RuntimeTargets
from predictor.core.runtime.types import RuntimePrediction
from predictor.core.shared_fits import fit_scope
from predictor.core.state.snapshot import Snapshot


class AutoRuntime(RuntimeEstimator):
    """The registered runtime ``auto`` (module docstring).

    Parameters
    ----------
    candidates : registry names to choose from; ceiling : coverage ceiling (share);
    max_dev : dev jobs scored; calibrate : map range probabilities through the dev fit's
    calibration (module docstring); random_state : passed to every candidate;
    make : the registry's ``make_method`` (injected: this module does not import the registry).
    """

    name = "auto"

    def __init__(
        self,
        candidates: Sequence[str] = RUNTIME_CANDIDATES,
        ceiling: float = COVERAGE_CEILING,
        max_dev: int = 3000,
        calibrate: bool = True,
        random_state: int | None = 0,
        make: Callable[[str, int | None], Any] | None = None,
    ) -> None:
        self.candidates = candidates
        self.calibrate = calibrate
        self.ceiling = ceiling
        self.max_dev = max_dev
        self.random_state = random_state
        self.make = make

    def _learn(self, history: RuntimeContext) -> None:
        if self.make is None:
            raise ValueError("auto needs make=registry.make_method to build its candidates")
        with fit_scope():  # the candidates and the chosen method share identical fits
            self.choice_: Choice = choose_runtime_method(
                history, self.make, self.candidates, ceiling=self.ceiling,
                max_dev=self.max_dev, random_state=self.random_state,
            )  # fmt: skip
            self.model_ = self.make(self.choice_.name, self.random_state).fit(history)

    def fitted_info(self) -> dict[str, Any]:
        c = self.choice_
        return {
            "chosen": c.name,
            "reason": c.reason,
            "tuning_success": round(c.tuning_success, 4),
            "tuning_coverage": round(c.tuning_coverage, 4),
            "tuning_ece": round(c.tuning_ece, 4),
            "dev_jobs": c.dev_jobs,
            "dev_scores": {
                k: {"success": round(v.success, 4), "coverage": round(v.coverage, 4)}
                for k, v in c.scores.items()
            },
            "chosen_fitted": self.model_.fitted_info(),
            "calibrated": bool(self.calibrate),
        }

    def train_ahead(self, tuning_part: bool = True) -> AutoRuntime:
        """The chosen method's (same answers)."""
        self.model_.train_ahead(tuning_part)
        return self

    def _predict(self, targets: RuntimeTargets, progress: Progress) -> RuntimePrediction:
        pred = self.model_._predict(targets, progress)
        return calibrated(pred, self.choice_.calibration) if self.calibrate else pred

    def settled_key(self, snapshot: Snapshot) -> Hashable | None:
        """The chosen method's (its answers, calibrated alike)."""
        return self.model_.settled_key(snapshot)


def calibrated(
    pred: RuntimePrediction, knots: tuple[list[float], list[float]]
) -> RuntimePrediction:
    """``pred`` with every range probability mapped through the calibration ``knots``; each
    rangeSet keeps its point estimate (module docstring)."""
    return RuntimePrediction(
        [
            replace(r, probability=apply_calibration(r.probability, knots), point=r.point_s)
            for r in pred.ranges
        ]
    )


class CalibratedRuntime(RuntimeEstimator):
    """A fitted runtime method whose answers state calibrated range probabilities.

    The service's bundle wraps the method its tuning part chose (same name, same ranges,
    same points) with the choice's calibration knots, so the answer of every path (the API,
    the pages, molding) reads as :class:`AutoRuntime`'s. Attributes the wrapped method learned
    (``functions_``, ``lam_``, ...) are read through.
    """

    def __init__(self, model: Any = None, knots: tuple[list[float], list[float]] | None = None):
        self.model = model
        self.knots = knots
        self.name = str(getattr(model, "name", "base"))

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or attr in ("model", "knots", "name"):
            raise AttributeError(attr)
        return getattr(self.model, attr)

    def fitted_info(self) -> dict[str, Any]:
        return {**self.model.fitted_info(), "calibrated": self.knots is not None}

    def _fitted(self) -> RuntimeContext:
        return self.model._fitted()

    def train_ahead(self, tuning_part: bool = True) -> CalibratedRuntime:
        """The wrapped method's (same answers)."""
        self.model.train_ahead(tuning_part)
        return self

    def _predict(self, targets: RuntimeTargets, progress: Progress) -> RuntimePrediction:
        pred = self.model._predict(targets, progress)
        return pred if self.knots is None else calibrated(pred, self.knots)

    def settled_key(self, snapshot: Snapshot) -> Hashable | None:
        """The wrapped method's (its answers, calibrated alike)."""
        return self.model.settled_key(snapshot)
