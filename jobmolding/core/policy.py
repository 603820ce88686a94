"""Molding and delayed submission inside a replay: a submit policy for the simulator engine.

At each arrival after the warm-up part (seed "End-to-End Predictions-Based Resource
Management Framework for Supercomputer Jobs", Sections IV-A, IV-B and V-C):

1. candidates: the user's used sizes and the original (``candidates``), each with the
   estimate the runtime model gives it (``runtime_models``);
2. one batched prediction of wait and runtime rangeSet for every candidate as a tentative
   arrival now, from what the simulated system knows (the predictor sees the engine);
3. the best-scoring size (``choice``);
4. ``delay`` only: the future time from the running jobs' predicted ends (each job's
   predicted runtime is the point of the rangeSet its own decision chose; warm-up jobs use
   their requested time; a job past its prediction is expected at its requested end), one
   more batched prediction for every candidate arriving then with those jobs gone, the size
   re-chosen for that load, and the 30% rule (``holdqueue.core.delay``). A held job is the
   head of the hold queue; arrivals during the hold queue behind it and are released with
   their spacing (``holdqueue.core.holdqueue``), then molded at their release.

The warm-up jobs (the first ``n_warmup`` arrivals) are submitted unchanged; the predictor is
fitted at the first evaluated arrival, on what the replay knows by then.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from holdqueue.core.delay import decide_delay, future_time
from holdqueue.core.holdqueue import HoldQueue
from jobmolding.core.candidates import candidate_sizes
from jobmolding.core.choice import MoldingDecision, choose_size
from jobmolding.core.runtime_models import (
    RUNTIME_MODELS,
    downey_factor,
    paper_estimate,
    roulette_runtime,
)
from jobmolding.core.score import RangeSetLike
from jobmolding.core.user_history import UserSizeHistory
from predictor.core.state.request import RequestBatch
from pyss_adapter.core.policy import SubmitDecision

STRATEGIES = ("baseline", "molding", "delay")


@dataclass(frozen=True)
class MoldingParams:
    """Settings of a molding replay (defaults: the seed's)."""

    strategy: str = "molding"
    runtime_model: str = "paper"
    grid: str = "none"
    grid_factor: float = 4.0
    threshold: float = 0.30
    merge_fraction: float = 0.05
    sigma: float = 1.0
    downey_a: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.runtime_model not in RUNTIME_MODELS:
            raise ValueError(
                f"runtime_model must be one of {RUNTIME_MODELS}, got {self.runtime_model!r}"
            )


class ReplayPredictor(Protocol):
    """Predictions inside a replay, from what the simulated system knows.

    ``warm_up`` fits on the engine's state at ``now``. ``predict`` answers for K tentative
    arrivals (``requests.submit_s`` may be later than ``now``; jobs in ``ended`` are taken
    as finished by then) with their waits (K,) and runtime rangeSets.
    """

    def warm_up(self, engine: Any, now: float) -> None: ...

    def predict(
        self, engine: Any, now: float, requests: RequestBatch, ended: frozenset[int]
    ) -> tuple[np.ndarray, list[RangeSetLike]]: ...


class MoldingPolicy:
    """The engine's submit policy for the ``molding`` and ``delay`` strategies.

    Parameters
    ----------
    predictor : ReplayPredictor
    params : MoldingParams
    requests : RequestBatch aligned with the engine's jobs (row j = job j): the log's user,
        group, queue, ... of each job.
    n_warmup : arrivals submitted unchanged before the first decision.
    max_limit_s : the machine's runtime limit (``maxLimit``, the header's MaxRuntime); None:
        the largest requested time among the arrivals so far (a limit learnt without reading
        later arrivals).
    """

    def __init__(
        self,
        predictor: ReplayPredictor,
        params: MoldingParams,
        requests: RequestBatch,
        n_warmup: int,
        max_limit_s: float | None,
    ) -> None:
        self.predictor = predictor
        self.params = params
        self.requests = requests
        self.n_warmup = int(n_warmup)
        self.declared_limit_s = float(max_limit_s) if max_limit_s else None
        self.max_limit_s = self.declared_limit_s or 0.0
        self.rng = np.random.default_rng(params.seed)
        self.history = UserSizeHistory()
        self.hold = HoldQueue()
        self.predicted_run_s: dict[int, float] = {}
        self.followers: set[int] = set()
        self.warmed = False
        self.predictions = 0
        self.decisions: dict[int, dict[str, Any]] = {}

    # -- engine notifications -------------------------------------------------------------
    def on_submit(self, engine: Any, j: int, now: float) -> SubmitDecision | None:
        if j in self.followers:  # released from the hold queue: mold now, never hold again
            self.followers.discard(j)
            return self._submit(engine, j, now, self._mold(engine, j, now, now, frozenset()))
        est0 = float(engine.jobs.estimate_s[j])
        if self.declared_limit_s is None:
            self.max_limit_s = max(self.max_limit_s, est0)
        decision = self._arrival(engine, j, now)
        # the user's own request becomes history after its decision (candidates, maxPrevious)
        self.history.submitted(int(self.requests.user[j]), int(self.requests.procs[j]), est0)
        return decision

    def _arrival(self, engine: Any, j: int, now: float) -> SubmitDecision | None:
        if j < self.n_warmup or self.params.strategy == "baseline":
            return None
        if not self.warmed:
            self.predictor.warm_up(engine, now)
            self.warmed = True
        self.hold.due(now)
        if self.params.strategy == "delay" and self.hold.holding(now):
            held = self.hold.admit(j, now)
            self.followers.add(j)
            return SubmitDecision(release_at=held.release_s, ask_again=True, reason="follower")
        decision = self._mold(engine, j, now, now, frozenset())
        if self.params.strategy == "delay":
            return self._maybe_delay(engine, j, now, decision)
        return self._submit(engine, j, now, decision)

    def on_finish(self, engine: Any, j: int, now: float) -> None:
        if int(engine.procs[j]) == int(self.requests.procs[j]):
            # a runtime observed at the user's own size: a molded job's drawn runtime says
            # nothing new about the user's jobs and would feed the roulette wheel its own draws
            user = int(self.requests.user[j])
            self.history.finished(user, int(engine.procs[j]), float(engine.runtime[j]))
        self.predicted_run_s.pop(j, None)
        on_finish = getattr(self.predictor, "on_finish", None)
        if on_finish is not None:
            on_finish(engine, j, now)

    def on_start(self, engine: Any, j: int, now: float) -> None:
        on_start = getattr(self.predictor, "on_start", None)
        if on_start is not None:
            on_start(engine, j, now)

    # -- decisions --------------------------------------------------------------------------
    def _estimate(self, j: int, engine: Any, size: int) -> float:
        """The requested time the user would give at ``size`` under the runtime model."""
        n0, est0 = int(self.requests.procs[j]), float(engine.jobs.estimate_s[j])
        if size == n0:
            return est0
        if self.params.runtime_model == "paper":
            prev = self.history.max_estimate(int(self.requests.user[j]), size)
            return paper_estimate(n0, est0, size, prev, self.max_limit_s)
        factor = downey_factor(n0, size, self.params.downey_a, self.params.sigma)
        return min(est0 * factor, max(self.max_limit_s, est0))

    def _runtime(self, j: int, engine: Any, size: int, estimate_s: float) -> float:
        n0, run0 = int(self.requests.procs[j]), float(engine.jobs.runtime_s[j])
        if size == n0:
            return run0
        if self.params.runtime_model == "paper":
            past = self.history.runtimes(int(self.requests.user[j]), size)
            return min(roulette_runtime(past, self.rng), estimate_s)
        factor = downey_factor(n0, size, self.params.downey_a, self.params.sigma)
        return min(run0 * factor, estimate_s)

    def _candidates(self, j: int, engine: Any) -> np.ndarray:
        user = int(self.requests.user[j])
        used = (
            self.history.sizes_with_runtimes(user)
            if self.params.runtime_model == "paper"
            else self.history.sizes(user)
        )
        return candidate_sizes(
            int(self.requests.procs[j]),
            used,
            int(engine.machine_procs),
            self.params.grid,
            self.params.grid_factor,
        )

    def _mold(
        self, engine: Any, j: int, now: float, at_s: float, ended: frozenset[int]
    ) -> MoldingDecision:
        sizes = self._candidates(j, engine)
        estimates = np.array([self._estimate(j, engine, int(s)) for s in sizes])
        batch = self.requests.take(np.full(sizes.size, j))
        batch = replace(
            batch, procs=sizes, req_time_s=estimates, submit_s=np.full(sizes.size, float(at_s))
        )
        waits, runtimes = self.predictor.predict(engine, now, batch, ended)
        self.predictions += sizes.size
        return choose_size(int(self.requests.procs[j]), sizes, waits, runtimes)

    def _submit(
        self, engine: Any, j: int, now: float, d: MoldingDecision, release_at: float | None = None
    ) -> SubmitDecision | None:
        size = d.chosen_procs
        estimate = self._estimate(j, engine, size)
        runtime = self._runtime(j, engine, size, estimate)
        self.predicted_run_s[j] = float(d.runtime_s[d.chosen])
        self.decisions[j] = {
            "molded": d.molded,
            "delay_s": 0.0 if release_at is None else release_at - now,
            "candidates": d.procs.tolist(),  # the sizes tried (reported by ``tried``)
        }
        if not d.molded and release_at is None:
            return None
        return SubmitDecision(
            procs=size, estimate_s=estimate, runtime_s=runtime, release_at=release_at, reason=d
        )

    def _expected_ends(self, engine: Any, now: float) -> tuple[np.ndarray, np.ndarray]:
        """(jobs, predicted end) of the running jobs (see the module docstring)."""
        running = engine.running_jobs()
        jobs = np.array([j for j, _ in running], dtype=np.int64)
        start = np.array([s for _, s in running], dtype=float)
        requested = np.array([engine.requested[j] for j, _ in running], dtype=float)
        predicted = np.array([self.predicted_run_s.get(j, np.nan) for j, _ in running], float)
        end = np.where(np.isnan(predicted), start + requested, start + predicted)
        end = np.where(end > now, end, np.maximum(start + requested, now + 1.0))
        return jobs, end

    def _could_pay(self, now: float, t: float, d: MoldingDecision) -> bool:
        """False when no prediction at t can pass the threshold (skip predicting it): the
        delay alone, plus the shortest runtime predicted now when the predictor says its
        runtimes do not depend on the arrival time (``same_runtime_later``), already fails."""
        floor = t - now
        if getattr(self.predictor, "same_runtime_later", False):
            floor += float(np.min(d.runtime_s))
        return floor < (1.0 - self.params.threshold) * d.chosen_response_s

    def _maybe_delay(
        self, engine: Any, j: int, now: float, now_decision: MoldingDecision
    ) -> SubmitDecision | None:
        jobs, ends = self._expected_ends(engine, now)
        t = future_time(now, ends, self.params.merge_fraction)
        if t is None or not self._could_pay(now, t, now_decision):
            return self._submit(engine, j, now, now_decision)
        ended = frozenset(jobs[ends <= t].tolist())
        later = self._mold(engine, j, now, t, ended)
        verdict = decide_delay(
            now,
            t,
            now_decision.chosen_procs,
            now_decision.chosen_response_s,
            later.chosen_procs,
            later.chosen_response_s,
            self.params.threshold,
        )
        if not verdict.delay:
            return self._submit(engine, j, now, now_decision)
        self.hold.hold(j, now, t)
        return self._submit(engine, j, now, later, release_at=t)
