"""The contract every runtime method follows (rangeSet, baseline, Smith, Li, Tsafrir, ...).

The same shape as the wait methods (:mod:`predictor.core.wait.types`), scikit-learn style:

- ``__init__`` stores keyword parameters only;
- ``fit(history)`` learns from a :class:`RuntimeContext` (a log and its tuning part) and
  returns ``self``; learned attributes end in ``_``;
- ``predict(snapshot, requests)`` answers a batch of requests arriving in a snapshot with a
  :class:`RuntimePrediction`: one :class:`RangeSet` per request, each saying which history
  level answered (``tuple``, ``user``, ``size``, ``all``: the fallback when the history has
  nothing for the request's tuple, user or size; ``none`` when it has nothing at all);
- ``predict_rows(rows)`` answers log rows of the fitted history at their own arrival: the
  evaluation's fast path, identical to ``predict`` on a snapshot of that log.

A job counts as runtime history at t only if it had ended before t (strictly) and t is at or
before ``snapshot.known_at_s``. Methods are registered by name in
:mod:`predictor.core.runtime.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.rangeset import RangeSet

if TYPE_CHECKING:
    from predictor.core.state.request import JobRequest, RequestBatch
    from predictor.core.state.snapshot import Snapshot


@dataclass(frozen=True)
class RuntimePrediction:
    """One rangeSet per target (request or row), aligned with the targets."""

    ranges: list[RangeSet]

    def __len__(self) -> int:
        return len(self.ranges)

    @property
    def point_s(self) -> np.ndarray:
        return np.array([r.point_s for r in self.ranges])

    @property
    def length_s(self) -> np.ndarray:
        return np.array([r.length_s for r in self.ranges])

    @property
    def level(self) -> np.ndarray:
        """Which history level answered each target (the fallback used)."""
        return np.array([r.level for r in self.ranges], dtype=object)

    def contains(self, actual_s: np.ndarray) -> np.ndarray:
        return np.array([r.contains(a) for r, a in zip(self.ranges, actual_s, strict=True)])


class RuntimeMethod(Protocol):
    name: str

    def fit(self, history: RuntimeContext) -> RuntimeMethod: ...

    def predict(
        self, snapshot: Snapshot, requests: JobRequest | list[JobRequest] | RequestBatch
    ) -> RuntimePrediction: ...

    def predict_rows(self, rows: np.ndarray, progress: Any = None) -> RuntimePrediction: ...

    def train_ahead(self, tuning_part: bool = True) -> RuntimeMethod: ...

    def fitted_info(self) -> dict[str, Any]: ...
