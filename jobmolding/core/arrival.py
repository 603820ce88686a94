"""The arrival decision: mold a job, then maybe hold it, from predictions on one snapshot
(seed "End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs",
Sections IV-A and IV-B). The replay's submit policy (``jobmolding.core.policy``) and the
live site (``holdqueue.services.decide``) both call :func:`decide_arrival`; they differ only
in where the snapshot comes from (the replay engine, the batch system) and in the predictor
object that answers on it (a bundle fitted on the simulated past, the site's bundle).

1. Mold: every candidate size is predicted as a tentative arrival on the snapshot
   (``choice.choose_size`` scores the response rangeSets). A candidate's runtime is the
   job's *own* predicted rangeSet times the speed-up model's factor (``factors``, work
   conserving), or, without factors (the seed's ``paper`` model), each size's own
   prediction. Under factors the runtime method is asked for the own size only, and the
   scaled rangeSets go into the answers (``predict_requests``' ``runtimes``): what the
   predictor answers, and a site tells the job it submits (``told``), is the runtime the
   decision used.
   Under a work-conserving model a candidate that would do more CPU work than the original
   size (``n f_n > work_limit x n0``; under Downey with ``A = n0`` every larger size) is not
   offered (:func:`within_work`): the job's own predicted gain does not count the
   processor-time it takes from the jobs behind it, and on every shared log those
   expansions cost the other jobs more than they gained (docs/results.md, "Advice that
   never hurts").
2. Guard: a molded size is kept only when its predicted response beats the original's by
   more than ``guard`` (a share of the original's response); otherwise the original size.
   A hold must likewise gain more than ``max(threshold, guard)``; a guard of 1 never molds
   nor holds. The guard is a per-site setting, chosen on the tuning part
   (``jobmolding.core.guard``).
3. Delay: the running jobs' predicted ends give the future time ``t``
   (``delay.future_time``); unless even a zero response at ``t`` fails the threshold, the
   snapshot is advanced to ``t`` by EASY with the predicted runtimes
   (``future.advance``), the job is molded again arriving at ``t`` and the 30% rule
   (``delay.decide_delay``) says whether to hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from jobmolding.core.choice import MoldingDecision, choose_size
from jobmolding.core.delay import (
    DELAY_THRESHOLD,
    MERGE_FRACTION,
    DelayDecision,
    decide_delay,
    future_time,
)
from jobmolding.core.future import advance
from jobmolding.core.runtime_models import scaled_rangeset
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import Snapshot


class ArrivalPredictor(Protocol):
    """Answers on a snapshot: ``predict`` gives (K,) waits and K runtime rangeSets of K
    requests (with ``runtimes`` given, those: no runtime is predicted, ``predict_requests``);
    ``runtimes`` only the rangeSets (the queued jobs' for the delay); ``running_ends`` the
    running jobs' predicted ends given how long they have run (``future.predicted_ends``)."""

    def predict(
        self,
        snapshot: Snapshot,
        requests: RequestBatch,
        runtimes: list[RangeSet] | None = None,
    ) -> tuple[np.ndarray, list[RangeSet]]: ...

    def runtimes(self, snapshot: Snapshot, requests: RequestBatch) -> list[RangeSet]: ...

    def running_ends(self, snapshot: Snapshot) -> np.ndarray: ...


@dataclass(frozen=True)
class ArrivalRules:
    """What the decision may do and its thresholds (defaults: the seed's, no guard)."""

    mold: bool = True
    delay: bool = True
    threshold: float = DELAY_THRESHOLD
    merge_fraction: float = MERGE_FRACTION
    guard: float = 0.0
    work_limit: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.guard <= 1.0:
            raise ValueError(f"guard must be in [0, 1], got {self.guard}")
        if not self.work_limit >= 1.0:
            raise ValueError(f"work_limit must be >= 1 (1: never more work), got {self.work_limit}")

    @property
    def delay_threshold(self) -> float:
        return max(self.threshold, self.guard)


@dataclass(frozen=True)
class Candidates:
    """The sizes to try (K,), the requested time at each (K,), and the runtime factor of each
    against the original size under a work-conserving model (None: predict each size)."""

    procs: np.ndarray
    req_time_s: np.ndarray
    factors: np.ndarray | None = None

    @classmethod
    def same_time(cls, sizes: np.ndarray, req_time_s: float) -> Candidates:
        sizes = np.asarray(sizes, dtype=np.int64)
        return cls(sizes, np.full(sizes.size, float(req_time_s)))


@dataclass(frozen=True)
class ArrivalDecision:
    """The size, when to submit (snapshot seconds) and the reasons."""

    now: MoldingDecision
    delay: DelayDecision | None
    later: MoldingDecision | None

    @property
    def delayed(self) -> bool:
        return self.delay is not None and self.delay.delay

    @property
    def procs(self) -> int:
        return self.delay.procs if self.delayed else self.now.chosen_procs  # type: ignore[union-attr]

    def release_s(self, now_s: float) -> float:
        """When the job goes to the batch system: the hold's end, else ``now_s``."""
        return self.delay.release_s if self.delayed else float(now_s)  # type: ignore[union-attr]

    @property
    def chosen(self) -> MoldingDecision:
        """The molding that goes with the submission (at the release when held)."""
        return self.later if self.delayed and self.later is not None else self.now

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"molding": self.now.as_dict(), "delay": None}
        if self.delay is not None:
            out["delay"] = self.delay.as_dict()
        if self.delayed and self.later is not None:
            out["molding_at_release"] = self.later.as_dict()
        return out


def within_work(cands: Candidates, original_procs: int, work_limit: float) -> Candidates:
    """The candidates whose CPU work is at most ``work_limit`` times the original's:
    ``n x f_n <= work_limit x n0`` (``f_n`` the runtime factor at size ``n``; the original
    always stays). Without factors (the seed's ``paper`` model) every candidate stays."""
    if cands.factors is None or not np.isfinite(work_limit):
        return cands
    work = cands.procs * cands.factors / float(original_procs)
    keep = (work <= work_limit * (1.0 + 1e-9)) | (cands.procs == original_procs)
    return Candidates(cands.procs[keep], cands.req_time_s[keep], cands.factors[keep])


def guarded(d: MoldingDecision, guard: float) -> MoldingDecision:
    """``d``, or the original size when the molded size's predicted gain is under ``guard``
    (``response_chosen > (1 - guard) x response_original``)."""
    if not d.molded or guard <= 0.0:
        return d
    hit = np.flatnonzero(d.procs == d.original_procs)
    if hit.size == 0:
        return d
    original = float(d.response_s[hit[0]])
    if d.chosen_response_s < (1.0 - guard) * original:
        return d
    gain = 1.0 - d.chosen_response_s / original if original > 0 else 0.0
    why = f"guard: size {d.chosen_procs} gains {gain:.0%} < {guard:.0%}; original kept"
    return replace(d, chosen=int(hit[0]), reason=why)


def mold_on(
    snapshot: Snapshot,
    request: JobRequest,
    cands: Candidates,
    predictor: ArrivalPredictor,
    guard: float = 0.0,
) -> MoldingDecision:
    """Predict every candidate arriving at ``request.submit_s`` on ``snapshot``; choose."""
    k = cands.procs.size
    batch = RequestBatch.of([request] * k)
    batch = replace(batch, procs=cands.procs.copy(), req_time_s=cands.req_time_s.copy())
    if cands.factors is None:  # the seed's model: each size's own prediction
        waits, runtimes = predictor.predict(snapshot, batch)
    else:  # work conserving: the job's own rangeSet, asked for once, scaled to each size
        own = np.flatnonzero(cands.procs == request.procs)[:1]
        mine = predictor.runtimes(snapshot, batch.take(own))[0]
        runtimes = [scaled_rangeset(mine, float(f)) for f in cands.factors]
        waits, _ = predictor.predict(snapshot, batch, runtimes)
    choice = choose_size(request.procs, cands.procs, waits, runtimes)  # type: ignore[arg-type]
    return guarded(choice, guard)


def _points(predictor: ArrivalPredictor, snapshot: Snapshot, jobs: Any) -> np.ndarray:
    if len(jobs) == 0:
        return np.zeros(0)
    return np.array([r.point_s for r in predictor.runtimes(snapshot, jobs.requests)], float)


def decide_arrival(
    snapshot: Snapshot,
    request: JobRequest,
    cands: Candidates,
    predictor: ArrivalPredictor,
    rules: ArrivalRules = ArrivalRules(),
) -> ArrivalDecision:
    """Mold (and maybe hold) ``request`` arriving at ``snapshot.time_s``.

    ``cands`` must hold the original size (it is the only one when ``rules.mold`` is off).
    """
    if not rules.mold:
        keep = cands.procs == request.procs
        cands = Candidates(cands.procs[keep], cands.req_time_s[keep], None)
    cands = within_work(cands, request.procs, rules.work_limit)
    now_s = float(snapshot.time_s)
    now = mold_on(snapshot, request, cands, predictor, rules.guard)
    if not rules.delay:
        return ArrivalDecision(now, None, None)
    ends = predictor.running_ends(snapshot)
    t = future_time(now_s, ends, rules.merge_fraction)
    later = None
    if t is not None and t - now_s < (1.0 - rules.delay_threshold) * now.chosen_response_s:
        future = advance(snapshot, t, ends, _points(predictor, snapshot, snapshot.waiting))
        later = mold_on(future, request.at(t), cands, predictor, rules.guard)
    # Without a second look (the delay alone fails the threshold), the verdict is judged
    # with a zero response at t: a lower bound, so the "no" is exact.
    verdict = decide_delay(
        now_s,
        t,
        now.chosen_procs,
        now.chosen_response_s,
        later.chosen_procs if later is not None else now.chosen_procs,
        later.chosen_response_s if later is not None else 0.0,
        rules.delay_threshold,
        future_predicted=later is not None,
    )
    return ArrivalDecision(now, verdict, later)
