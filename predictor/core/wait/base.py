"""Plumbing shared by the wait methods: ``fit`` keeps the history, ``predict`` and
``predict_rows`` turn their inputs into :class:`WaitTargets` and call the method's ``_predict``.

A method subclasses :class:`WaitEstimator` and writes ``_learn(history)`` (settings chosen on
the tuning part, indexes of the log) and ``_predict(targets, progress)``; see
:mod:`predictor.core.wait.types` for the contract.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from predictor.core.state.request import JobRequest, RequestBatch, as_batch
from predictor.core.state.snapshot import Snapshot
from predictor.core.wait.targets import WaitTargets
from predictor.core.wait.types import WaitContext, WaitPrediction

Progress = Callable[[float], None] | None


class NotFittedError(RuntimeError):
    """``predict`` before ``fit``."""


class WaitEstimator:
    """Base of the wait methods (scikit-learn style; see the module docstring)."""

    name = "base"

    def fit(self, history: WaitContext) -> WaitEstimator:
        self.history_ = history
        self._learn(history)
        return self

    def predict(
        self, snapshot: Snapshot, requests: JobRequest | list[JobRequest] | RequestBatch
    ) -> WaitPrediction:
        """Waits of ``requests`` arriving in ``snapshot`` (history known at its instant)."""
        history = self._fitted()
        targets = WaitTargets.from_snapshot(history, snapshot, as_batch(requests))
        return self._predict(targets, None)

    def predict_rows(self, rows: np.ndarray, progress: Progress = None) -> WaitPrediction:
        """Waits of log rows of the fitted history, each at its own arrival."""
        targets = WaitTargets.from_rows(self._fitted(), np.asarray(rows, dtype=np.int64))
        return self._predict(targets, progress)

    def predict_targets(self, targets: WaitTargets, progress: Progress = None) -> WaitPrediction:
        """Waits of targets already built on this method's fitted history (``history_``):
        a caller asking several methods fitted on one history about the same targets builds
        them, and their state, once (``auto``'s experts). The caller checks that the targets
        were built on this method's ``history_``: they are then what ``predict`` or
        ``predict_rows`` would build."""
        self._fitted()
        return self._predict(targets, progress)

    def train_ahead(self, tuning_part: bool = True) -> WaitEstimator:
        """Train now what a prediction at any instant would otherwise train lazily (a model
        per row block, ``auto``'s scored pool), so that a stored fitted method answers every
        instant without training. Answers are unchanged; nothing by default.
        ``tuning_part=False``: only what instants after the tuning part need (a live site,
        which is asked about "now" only)."""
        self._fitted()
        return self

    def _fitted(self) -> WaitContext:
        if not hasattr(self, "history_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit(history) first")
        return self.history_

    def _learn(self, history: WaitContext) -> None:
        """Choose settings on the tuning part; nothing by default."""

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        raise NotImplementedError

    def get_params(self) -> dict[str, Any]:
        """The keyword parameters given to ``__init__`` (scikit-learn's ``get_params``)."""
        return {k: v for k, v in vars(self).items() if not k.endswith("_") and k[0] != "_"}
