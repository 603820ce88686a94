"""The contract every queue-wait method follows (APQ, QBETS, IBL, baselines, sim).

A method is configured in ``__init__`` (keyword parameters only), learns in
``fit`` from the tuning part only, and answers in ``predict`` for target rows.
Inside the core, time is seconds since the trace start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd


@dataclass
class WaitContext:
    """Everything a method may look at.

    jobs : the trace's jobs, columns ``traces.core.swf.SWF_FIELDS``, sorted by submit time
           (row i is job i everywhere below).
    state : the system-state sweep (``predictor.core.state.sweep.StateSweep``), one row per job.
    n_tune : rows ``[0, n_tune)`` are the tuning/warm-up part; methods may fit on them only.
    machine_procs : processors of the machine.
    Leakage rule: for a target i, row j is usable history only if
    ``start_j = submit_j + wait_j <= submit_i`` (its wait is known); its runtime only if it had
    ended by then.
    """

    jobs: pd.DataFrame
    state: Any
    n_tune: int
    machine_procs: int


@dataclass
class WaitPrediction:
    """Predictions for ``targets`` (row indices), aligned with them.

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

    def fit(self, ctx: WaitContext) -> WaitMethod: ...

    def predict(
        self, ctx: WaitContext, targets: np.ndarray, progress: Any = None
    ) -> WaitPrediction: ...
