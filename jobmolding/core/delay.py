"""The delayed-submission decision (seed "End-to-End Predictions-Based Resource Management
Framework for Supercomputer Jobs", Section IV-B).

1. Future time: among the jobs running now, the earliest predicted completion ``t``; while
   another running job is predicted to complete within ``merge_fraction`` of ``t`` after
   ``t``, move ``t`` to that completion and look again. The seed says "5% of t"; t is read
   as the time from now (``t - now``): 5% of an absolute clock would grow with the age of
   the machine and mean days on a two-year log.
2. Point predictions: the response rangeSet if submitted now and if submitted at ``t``
   (with the size re-chosen for the load predicted at ``t``), each reduced to the
   probability-weighted sum of its range medians.
3. Delay when ``(t - now) + predicted_future < (1 - threshold) * predicted_now``: the job's
   response counted from its arrival, delay included, beats submitting now by more than
   ``threshold`` (30% in the seed; it absorbs prediction errors and unforeseen arrivals).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from jobmolding.core.score import point_prediction

MERGE_FRACTION = 0.05
DELAY_THRESHOLD = 0.30

__all__ = [
    "DELAY_THRESHOLD",
    "MERGE_FRACTION",
    "DelayDecision",
    "decide_delay",
    "future_time",
    "point_prediction",
]


def future_time(
    now_s: float, predicted_end_s: np.ndarray, merge_fraction: float = MERGE_FRACTION
) -> float | None:
    """The future submission time from the running jobs' predicted completions.

    Parameters
    ----------
    now_s : the arrival time, seconds.
    predicted_end_s : (R,) predicted completion time of each running job, seconds. Ends at
        or before ``now_s`` (a job past its prediction) are ignored: they say nothing about
        the future.
    merge_fraction : a completion within ``merge_fraction * (t - now)`` after ``t`` moves
        ``t`` to it (5% in the seed).

    Returns
    -------
    float, or None when no running job is predicted to end after now.
    """
    ends = np.sort(np.asarray(predicted_end_s, dtype=float))
    ends = ends[ends > now_s]
    if ends.size == 0:
        return None
    t = float(ends[0])
    for nxt in ends[1:].tolist():
        if nxt - t > merge_fraction * (t - now_s):
            break
        t = nxt
    return t


@dataclass(frozen=True)
class DelayDecision:
    """Whether to hold a job until ``future_s`` and why.

    predicted_now_s : point response if submitted now (at ``procs_now``).
    predicted_future_s : point response counted from ``future_s`` (at ``procs_future``).
    delayed_response_s : ``delay_s + predicted_future_s``, the response counted from now.
    future_predicted : False when the hold alone fails the threshold, so the response at
        ``future_s`` was not predicted and 0 (a lower bound) was used: the "no" is exact.
    """

    delay: bool
    now_s: float
    future_s: float | None
    procs_now: int
    procs_future: int
    predicted_now_s: float
    predicted_future_s: float
    threshold: float
    reason: str
    future_predicted: bool = True

    @property
    def delay_s(self) -> float:
        return 0.0 if self.future_s is None else float(self.future_s - self.now_s)

    @property
    def delayed_response_s(self) -> float:
        return self.delay_s + self.predicted_future_s

    @property
    def release_s(self) -> float:
        """When the job goes to the batch system: ``future_s`` if delayed, else now."""
        return float(self.future_s) if self.delay and self.future_s is not None else self.now_s

    @property
    def procs(self) -> int:
        return self.procs_future if self.delay else self.procs_now

    def as_dict(self) -> dict[str, Any]:
        return {
            "delay": self.delay,
            "now_s": self.now_s,
            "future_s": self.future_s,
            "delay_s": self.delay_s,
            "procs_now": self.procs_now,
            "procs_future": self.procs_future,
            "predicted_now_s": self.predicted_now_s,
            "predicted_future_s": self.predicted_future_s,
            "delayed_response_s": self.delayed_response_s,
            "threshold": self.threshold,
            "reason": self.reason,
            "future_predicted": self.future_predicted,
        }


def decide_delay(
    now_s: float,
    future_s: float | None,
    procs_now: int,
    predicted_now_s: float,
    procs_future: int,
    predicted_future_s: float,
    threshold: float = DELAY_THRESHOLD,
    future_predicted: bool = True,
) -> DelayDecision:
    """Delay iff ``(future - now) + predicted_future < (1 - threshold) * predicted_now``.

    ``future_predicted`` False: ``predicted_future_s`` is the lower bound 0, used because the
    hold alone already fails the threshold (the reason says so)."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    fields: dict[str, Any] = dict(
        now_s=float(now_s),
        future_s=None if future_s is None else float(future_s),
        procs_now=int(procs_now),
        procs_future=int(procs_future),
        predicted_now_s=float(predicted_now_s),
        predicted_future_s=float(predicted_future_s),
        threshold=float(threshold),
        future_predicted=bool(future_predicted),
    )
    if future_s is None or not np.isfinite(predicted_future_s):
        return DelayDecision(delay=False, reason="no running job ends after now", **fields)
    total = (future_s - now_s) + predicted_future_s
    bar = (1.0 - threshold) * predicted_now_s
    delay = bool(total < bar)
    verdict = "<" if delay else ">="
    later = f"predicted {predicted_future_s:.0f} s" if future_predicted else "none (not predicted)"
    reason = (
        f"delay {future_s - now_s:.0f} s + {later} = {total:.0f} s "
        f"{verdict} {1.0 - threshold:.2f} x {predicted_now_s:.0f} s = {bar:.0f} s"
    )
    return DelayDecision(delay=delay, reason=reason, **fields)
