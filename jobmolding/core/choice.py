"""Choose the request size: score every candidate's response rangeSet, keep the best, and
record why (seed "End-to-End Predictions-Based Resource Management Framework for
Supercomputer Jobs", Section IV-A).

A candidate's response rangeSet is its predicted runtime rangeSet shifted by its predicted
wait (a point): ``[w + l_i, w + u_i]`` with the runtime ranges' probabilities. Candidates are
predicted as tentative arrivals on the same snapshot, so they compete for the same state.
Ties (within ``tie_tolerance``) go to the user's original size, then to the smaller size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jobmolding.core.score import RangeSetLike, point_prediction, score_candidates

TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class MoldingDecision:
    """A molding choice and its reasons, one entry per candidate (aligned arrays).

    procs : (K,) candidate sizes. wait_s : (K,) predicted waits. runtime_s, response_s : (K,)
    point predictions (probability-weighted medians). score : (K,) gain-function scores.
    n_ranges : (K,) ranges in each response rangeSet. chosen : index into the arrays.
    """

    original_procs: int
    procs: np.ndarray
    wait_s: np.ndarray
    runtime_s: np.ndarray
    response_s: np.ndarray
    score: np.ndarray
    n_ranges: np.ndarray
    chosen: int
    reason: str

    @property
    def chosen_procs(self) -> int:
        return int(self.procs[self.chosen])

    @property
    def molded(self) -> bool:
        return self.chosen_procs != self.original_procs

    @property
    def chosen_response_s(self) -> float:
        return float(self.response_s[self.chosen])

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready record: the candidates with their predictions and scores."""
        return {
            "original_procs": self.original_procs,
            "chosen_procs": self.chosen_procs,
            "reason": self.reason,
            "candidates": [
                {
                    "procs": int(self.procs[k]),
                    "wait_s": float(self.wait_s[k]),
                    "runtime_s": float(self.runtime_s[k]),
                    "response_s": float(self.response_s[k]),
                    "score": float(self.score[k]),
                    "n_ranges": int(self.n_ranges[k]),
                }
                for k in range(self.procs.size)
            ],
        }


def response_ranges(
    wait_s: float, runtime: RangeSetLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The response rangeSet ``(low, high, prob)``: each runtime range shifted by the wait."""
    w = max(float(wait_s), 0.0)
    return (
        np.asarray(runtime.low_s, dtype=float) + w,
        np.asarray(runtime.high_s, dtype=float) + w,
        np.asarray(runtime.probability, dtype=float),
    )


def pick(procs: np.ndarray, score: np.ndarray, original_procs: int, tol: float) -> int:
    """Index of the best score; the original size wins a tie, then the smaller size."""
    best = float(np.max(score))
    tied = np.flatnonzero(score >= best - tol)
    original = tied[procs[tied] == original_procs]
    if original.size:
        return int(original[0])
    return int(tied[np.argmin(procs[tied])])


def choose_size(
    original_procs: int,
    procs: Sequence[int] | np.ndarray,
    wait_s: Sequence[float] | np.ndarray,
    runtimes: Sequence[RangeSetLike],
    tie_tolerance: float = TIE_TOLERANCE,
) -> MoldingDecision:
    """Score K candidates and pick one.

    Parameters
    ----------
    original_procs : the user's size (should be among ``procs``).
    procs : (K,) candidate sizes.
    wait_s : (K,) predicted wait of each candidate as a tentative arrival, seconds.
    runtimes : K runtime rangeSets (``low_s``, ``high_s``, ``probability``).

    Returns
    -------
    MoldingDecision (the reasons included).
    """
    procs = np.asarray(procs, dtype=np.int64)
    waits = np.maximum(np.asarray(wait_s, dtype=float), 0.0)
    if not (procs.size == waits.size == len(runtimes)) or procs.size == 0:
        raise ValueError(
            f"need as many waits and rangeSets as candidates (>0): got {procs.size} sizes, "
            f"{waits.size} waits, {len(runtimes)} rangeSets"
        )
    sets = [response_ranges(w, r) for w, r in zip(waits, runtimes, strict=True)]
    score = score_candidates(*zip(*sets, strict=True))
    chosen = pick(procs, score, int(original_procs), tie_tolerance)
    runtime_pt = np.array([point_prediction(r.low_s, r.high_s, r.probability) for r in runtimes])
    reason = (
        "only the original size"
        if procs.size == 1
        else "original size scores best or ties"
        if procs[chosen] == original_procs
        else f"size {int(procs[chosen])} scores {score[chosen]:.4f} > original's "
        f"{_score_of(procs, score, original_procs)}"
    )
    return MoldingDecision(
        original_procs=int(original_procs),
        procs=procs,
        wait_s=waits,
        runtime_s=runtime_pt,
        response_s=waits + runtime_pt,
        score=score,
        n_ranges=np.array([lo.size for lo, _, _ in sets], dtype=np.int64),
        chosen=chosen,
        reason=reason,
    )


def _score_of(procs: np.ndarray, score: np.ndarray, size: int) -> str:
    hit = np.flatnonzero(procs == size)
    return f"{score[hit[0]]:.4f}" if hit.size else "(not a candidate)"
