"""The contract every queue-wait method follows (APQ, QBETS, IBL, baselines, GBM, sim).

scikit-learn's estimator contract, with a system state instead of a feature matrix:

- ``__init__`` stores keyword parameters only;
- ``fit(history)`` learns from a :class:`WaitContext` (a log, its state sweep and its tuning
  part) and returns ``self``; learned attributes end in ``_``;
- ``predict(snapshot, requests)`` answers a batch of :class:`JobRequest` arriving in a
  :class:`Snapshot` with one :class:`WaitPrediction` (arrays aligned with the requests),
  reading history from the fitted log only as it was known at ``snapshot.known_at_s``;
- ``predict_rows(rows)`` answers log rows of the fitted history, each at its own arrival: the
  evaluation's fast path, identical to ``predict`` on ``from_log(jobs, submit_i, rows=i)``.

Inside the core, time is seconds since the trace start. Methods are registered by name in
:mod:`predictor.core.wait.registry`; :class:`predictor.core.wait.base.WaitEstimator` does the
plumbing, so a method writes ``_learn`` and ``_predict`` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from predictor.core.state.request import JobRequest, RequestBatch
    from predictor.core.state.snapshot import Snapshot


@dataclass
class WaitContext:
    """The history a wait method is fitted on.

    jobs : the log's jobs, columns ``traces.core.swf.SWF_FIELDS``, sorted by submit time
           (row i is job i everywhere below).
    state : the system-state sweep (``predictor.core.state.sweep.StateSweep``), one row per job.
    n_tune : rows ``[0, n_tune)`` are the tuning part; methods choose settings on them only.
    machine_procs : processors of the machine.
    Leakage rule: for a target arriving at t, row j is usable history only if its start
    ``submit_j + wait_j <= t`` (its wait is known) and it arrived before the target.
    """

    jobs: pd.DataFrame
    state: Any
    n_tune: int
    machine_procs: int


@dataclass
class WaitPrediction:
    """Predictions aligned with the targets (requests or rows).

    wait_s : predicted wait, seconds (>= 0).
    predictor : which sub-predictor answered per target (e.g. "stddev", "regression",
                "weighted_avg", "fallback_median"), or None for single-predictor methods.
    support : number of history jobs behind each answer, or None.
    upper_s : an upper bound (QBETS 0.95 bound), or None.
    extra : method-specific arrays (e.g. APQ's choice of distributions vs summaries).
    """

    wait_s: np.ndarray
    predictor: np.ndarray | None = None
    support: np.ndarray | None = None
    upper_s: np.ndarray | None = None
    extra: dict[str, np.ndarray] = field(default_factory=dict)


class WaitMethod(Protocol):
    name: str

    def fit(self, history: WaitContext) -> WaitMethod: ...

    def predict(
        self, snapshot: Snapshot, requests: JobRequest | list[JobRequest] | RequestBatch
    ) -> WaitPrediction: ...

    def predict_rows(self, rows: np.ndarray, progress: Any = None) -> WaitPrediction: ...

    def train_ahead(self, tuning_part: bool = True) -> WaitMethod: ...
