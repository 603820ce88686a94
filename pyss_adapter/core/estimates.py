"""Runtime estimates used for reservations (spec: "an estimate source that can be swapped").

A source gives every job an estimate before the replay (``initial``); a
``dynamic`` source may also revise it when the job is submitted, having seen the
terminations so far (Tsafrir's last-two average needs that).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pyss_adapter.core.jobs import SimJobs

ESTIMATE_NAMES = ("requested", "tsafrir")


class EstimateSource:
    """Base: the user's requested time (after the mode's conversion)."""

    name = "requested"
    dynamic = False

    def initial(self, jobs: SimJobs) -> np.ndarray:
        """Estimates in seconds, shape (n,), in the order of ``jobs``; all >= 1."""
        return np.asarray(jobs.estimate_s, dtype=np.float64)

    def at_submit(self, j: int, now: float) -> float:  # pragma: no cover - static sources
        raise NotImplementedError

    def revise(self, j: int, requested_s: float) -> float | None:
        """A submit policy changed job ``j``'s requested time: its new estimate.

        ``None`` keeps the current one (or lets a dynamic source decide at submission).
        """
        return requested_s

    def at_finish(self, j: int, now: float, runtime_s: float) -> None:  # pragma: no cover
        raise NotImplementedError


class RequestedEstimates(EstimateSource):
    """The requested time, as PySS uses it."""


class ArrayEstimates(EstimateSource):
    """Any precomputed estimate per job (a predictor's output), or a callable on the jobs.

    Values are in the order of :class:`SimJobs` and floored at 1 second.
    """

    def __init__(self, values: np.ndarray | Callable[[SimJobs], Any], name: str = "array") -> None:
        self.values = values
        self.name = name

    def initial(self, jobs: SimJobs) -> np.ndarray:
        raw = self.values(jobs) if callable(self.values) else self.values
        out = np.asarray(raw, dtype=np.float64)
        if out.shape != (len(jobs),):
            raise ValueError(f"estimates must have shape ({len(jobs)},), got {out.shape}")
        if not np.isfinite(out).all():
            raise ValueError("estimates must be finite")
        return np.maximum(out, 1.0)

    def revise(self, j: int, requested_s: float) -> float | None:
        """A precomputed estimate knows nothing of the new request: it stays as it was."""
        return None


class TsafrirEstimates(EstimateSource):
    """Tsafrir, Etsion & Feitelson (2007): mean runtime of the user's last two finished jobs.

    ``estimate = min(requested, mean(last two runtimes))``; the user's requested
    time while the user has no finished job yet (one finished job: its runtime).
    """

    name = "tsafrir"
    dynamic = True

    def initial(self, jobs: SimJobs) -> np.ndarray:
        self._requested = jobs.estimate_s.tolist()
        self._user = jobs.user_id.tolist()
        self._history: dict[int, tuple[float, ...]] = {}
        return np.asarray(jobs.estimate_s, dtype=np.float64).copy()

    def at_submit(self, j: int, now: float) -> float:
        past = self._history.get(self._user[j])
        if not past:
            return self._requested[j]
        return max(1.0, min(self._requested[j], sum(past) / len(past)))

    def revise(self, j: int, requested_s: float) -> float | None:
        self._requested[j] = requested_s
        return None  # recomputed by at_submit when the job enters the queue

    def at_finish(self, j: int, now: float, runtime_s: float) -> None:
        user = self._user[j]
        self._history[user] = (*self._history.get(user, ())[-1:], runtime_s)


def estimate_source(spec: str | EstimateSource | np.ndarray | Callable | None) -> EstimateSource:
    """Resolve a name (``requested``, ``tsafrir``), an array, a callable or a source."""
    if spec is None:
        return RequestedEstimates()
    if isinstance(spec, EstimateSource):
        return spec
    if isinstance(spec, str):
        if spec == "requested":
            return RequestedEstimates()
        if spec == "tsafrir":
            return TsafrirEstimates()
        raise ValueError(f"estimates must be one of {ESTIMATE_NAMES}, got {spec!r}")
    return ArrayEstimates(spec)
