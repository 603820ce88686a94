"""Plumbing shared by the runtime methods: ``fit`` keeps the history, ``predict`` and
``predict_rows`` turn their inputs into :class:`RuntimeTargets` and call ``_predict``.

A method subclasses :class:`RuntimeEstimator` and writes ``_learn(history)`` and
``_predict(targets, progress)``; see :mod:`predictor.core.runtime.types` for the contract.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Self

import numpy as np

from predictor.core.lru import kept_on
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.runtime.settled import SettledAnswers
from predictor.core.runtime.targets import RuntimeTargets
from predictor.core.runtime.types import RuntimePrediction
from predictor.core.state.request import JobRequest, RequestBatch, as_batch
from predictor.core.state.snapshot import Snapshot
from predictor.core.wait.base import NotFittedError

Progress = Callable[[float], None] | None
LEVEL_NAMES = ("tuple", "user", "size", "all")


class RuntimeEstimator:
    """Base of the runtime methods (scikit-learn style; see the module docstring)."""

    name = "base"

    def fit(self, history: RuntimeContext) -> Self:
        self.__dict__.pop("_settled", None)  # answers of an earlier fit
        self.history_ = history
        self._learn(history)
        return self

    def predict(
        self, snapshot: Snapshot, requests: JobRequest | list[JobRequest] | RequestBatch
    ) -> RuntimePrediction:
        """RangeSets of ``requests`` arriving in ``snapshot`` (history known at its instant)."""
        history = self._fitted()
        batch = as_batch(requests)

        def compute(sub: RequestBatch) -> RuntimePrediction:
            return self._predict(RuntimeTargets.from_snapshot(history, snapshot, sub), None)

        key = self.settled_key(snapshot)
        if key is None:
            return compute(batch)
        kept = kept_on(self, "_settled", SettledAnswers)  # not a parameter
        return RuntimePrediction(kept.answer(key, batch, lambda sub: compute(sub).ranges))

    def settled_key(self, snapshot: Snapshot) -> Hashable | None:
        """A key such that every request gets the same answer at any two instants with
        equal keys (:mod:`predictor.core.runtime.settled`), or None (always predict; the
        default)."""
        return None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_settled", None)  # answers kept for the settled history: never pickled
        return state

    def predict_rows(self, rows: np.ndarray, progress: Progress = None) -> RuntimePrediction:
        """RangeSets of log rows of the fitted history, each at its own arrival."""
        targets = RuntimeTargets.from_rows(self._fitted(), np.asarray(rows, dtype=np.int64))
        return self._predict(targets, progress)

    def fitted_info(self) -> dict[str, Any]:
        """What was learned, for the evaluation's report (JSON-ready); nothing by default."""
        return {}

    def train_ahead(self, tuning_part: bool = True) -> Self:
        """Train now what a prediction at any instant would otherwise train lazily (a model
        per row block, a level per block), so that a stored fitted method answers every
        instant without training. Answers are unchanged; nothing by default.
        ``tuning_part=False``: only what instants after the tuning part need."""
        self._fitted()
        return self

    def _fitted(self) -> RuntimeContext:
        if not hasattr(self, "history_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit(history) first")
        return self.history_

    def _learn(self, history: RuntimeContext) -> None:
        """Learn on the tuning part; nothing by default."""

    def _predict(self, targets: RuntimeTargets, progress: Progress) -> RuntimePrediction:
        raise NotImplementedError

    def get_params(self) -> dict[str, Any]:
        """The keyword parameters given to ``__init__`` (scikit-learn's ``get_params``)."""
        return {k: v for k, v in vars(self).items() if not k.endswith("_") and k[0] != "_"}


def single_ranges(
    low: np.ndarray, high: np.ndarray, point: np.ndarray, levels: np.ndarray, support: np.ndarray
) -> RuntimePrediction:
    """One range per target as rangeSets; ``point`` is kept as the range's point."""
    return RuntimePrediction(
        [
            RangeSet(
                np.array([lo]),
                np.array([hi]),
                np.array([1.0]),
                level=LEVEL_NAMES[lv] if n > 0 else "none",
                support=int(n),
                point=float(p),
            )
            for lo, hi, p, lv, n in zip(low, high, point, levels, support, strict=True)
        ]
    )
