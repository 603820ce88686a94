"""A method's recent accuracy on a site, for answers that say how far to trust them.

An answer about a new request comes with (1) an interval at the caller's confidence and
``P(start within T)`` (:mod:`predictor.core.wait.intervals`) and (2) the method's recent AAE and
the mean wait of the same recent jobs, so AAE / mean wait reads like the evaluation's column.
Both come from re-predicting the ``n`` jobs of the log that most recently *started* by the
request's ``known_at_s`` (their waits are known then), each at its own arrival: the same
online rule as the evaluation, where a job's error is usable once its wait is known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from predictor.core.wait.history import KnownHistory
from predictor.core.wait.intervals import interval_from_pool, prob_within, scores

DEFAULT_RECENT = 300


@dataclass(frozen=True)
class RecentErrors:
    """The recent jobs a method was re-scored on: rows, its predictions, the actual waits."""

    rows: np.ndarray
    pred_s: np.ndarray
    wait_s: np.ndarray

    @property
    def aae_s(self) -> float:
        return float(np.mean(np.abs(self.pred_s - self.wait_s))) if self.rows.size else np.nan

    @property
    def mean_wait_s(self) -> float:
        return float(np.mean(self.wait_s)) if self.rows.size else np.nan

    def scores(self, score: str = "diff") -> np.ndarray:
        return scores(self.pred_s, self.wait_s, score)

    def answer(
        self, pred_s: np.ndarray, level: float, within_s: float | None = None
    ) -> dict[str, Any]:
        """Interval, ``P(start within T)`` and recent accuracy for predictions ``pred_s``.

        Raises ``ValueError`` when no recent job is known (nothing to calibrate from).
        """
        pool = self.scores()
        low, high = interval_from_pool(pred_s, pool, level)
        out: dict[str, Any] = {
            "level": level,
            "low_s": low,
            "high_s": high,
            "recent_jobs": int(self.rows.size),
            "recent_aae_s": self.aae_s,
            "recent_mean_wait_s": self.mean_wait_s,
        }
        if within_s is not None:
            out["within_s"] = float(within_s)
            out["p_within"] = prob_within(pred_s, pool, within_s)
        return out


def recent_rows(jobs: Any, known_at_s: float, n_before: int, n: int = DEFAULT_RECENT) -> np.ndarray:
    """The ``n`` usable rows below ``n_before`` that most recently started by ``known_at_s``,
    in row (arrival) order."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    known = KnownHistory.from_jobs(jobs)
    k = int(known.prefix(np.array([float(known_at_s)]))[0])
    rows = known.order[:k]
    rows = rows[rows < n_before]
    return np.sort(rows[-n:])


def recent_errors(method: Any, rows: np.ndarray, wait_s: np.ndarray) -> RecentErrors:
    """Re-predict ``rows`` of a fitted method's log at their own arrivals."""
    rows = np.asarray(rows, dtype=np.int64)
    pred = method.predict_rows(rows).wait_s if rows.size else np.zeros(0)
    return RecentErrors(rows=rows, pred_s=np.asarray(pred, dtype=float), wait_s=wait_s[rows])
