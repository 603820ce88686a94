"""Molding and delayed submission inside a replay: a submit policy for the simulator engine.

At each arrival after the warm-up part (seed "End-to-End Predictions-Based Resource
Management Framework for Supercomputer Jobs", Sections IV-A, IV-B and V-C) the policy takes
the simulated system's snapshot (``predictor.core.state.from_engine.snapshot_from_engine``), the
candidates (the user's used sizes and the original, ``candidates``, each with the requested
time and runtime factor of the runtime model, ``runtime_models``), and calls the one arrival
decision the live site also calls (``arrival.decide_arrival``) with its predictor (a
``replay_bundle.ReplayBundle``: the live service's bundle fitted on the simulated past).

What the decision returns is applied to the engine: the chosen size, with the requested time
and the actual runtime the runtime model gives it (the replay's ground truth: ``paper``
draws a runtime of the user's at that size, ``downey`` scales the job's own); a held job is
the head of the hold queue; arrivals during the hold are molded at their arrival (never
held on their own) and queue behind it, released with their spacing (``hold``), as on a live
site (``holdqueue.services.live``).

The warm-up jobs (the first ``n_warmup`` arrivals) are submitted unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from jobmolding.core.arrival import (
    ArrivalDecision,
    ArrivalPredictor,
    ArrivalRules,
    Candidates,
    decide_arrival,
)
from jobmolding.core.candidates import (
    NEWCOMER_GRID,
    candidate_sizes,
    snapshot_sizes,
    speedup_candidates,
)
from jobmolding.core.hold import HoldQueue
from jobmolding.core.runtime_models import (
    RUNTIME_MODELS,
    downey_factor,
    paper_estimate,
    roulette_runtime,
)
from jobmolding.core.user_history import UserSizeHistory
from predictor.core.state.from_engine import snapshot_from_engine
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import Snapshot
from pyss_adapter.core.policy import SubmitDecision

STRATEGIES = ("baseline", "molding", "delay")


@dataclass(frozen=True)
class MoldingParams:
    """Settings of a molding replay (defaults: the seed's; ``guard`` 0: no guard, None:
    chosen on the tuning part, ``guard.choose_guard``; ``work_limit``: the most CPU work a
    molded size may do against the original, ``arrival.within_work``, inf: the seed's;
    ``grid``: what a user with no job in the snapshot is offered, ``candidates.grid_sizes``;
    None: the live site's ``NEWCOMER_GRID`` under ``downey``, the seed's ``none`` under
    ``paper``)."""

    strategy: str = "molding"
    runtime_model: str = "paper"
    grid: str | None = None
    grid_factor: float = 4.0
    threshold: float = 0.30
    merge_fraction: float = 0.05
    guard: float | None = 0.0
    sigma: float = 1.0
    downey_a: float | None = None
    seed: int = 0
    work_limit: float = 1.0

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.runtime_model not in RUNTIME_MODELS:
            raise ValueError(
                f"runtime_model must be one of {RUNTIME_MODELS}, got {self.runtime_model!r}"
            )
        if self.grid is None:  # what a live site offers a newcomer; the seed's none under paper
            grid = "none" if self.runtime_model == "paper" else NEWCOMER_GRID
            object.__setattr__(self, "grid", grid)
        elif self.runtime_model == "paper" and self.grid != "none":
            raise ValueError(
                "grid must be 'none' under the paper model (its roulette wheel has no runtime "
                f"at a size the user never ran), got {self.grid!r}"
            )

    def rules(self, delay: bool) -> ArrivalRules:
        if self.guard is None:
            raise ValueError("guard None means 'choose on the tuning part' (evaluate does)")
        return ArrivalRules(
            True, delay, self.threshold, self.merge_fraction, self.guard, self.work_limit
        )


class ReplayPredictor(ArrivalPredictor, Protocol):
    """An arrival predictor that learns from the replay's snapshot (``refresh``) first."""

    def refresh(self, snapshot: Snapshot) -> None: ...

    def keep(self, job_key: int, at_s: float, procs: int) -> None:
        """The job was submitted at ``at_s`` with ``procs`` processors, as answered on the
        decision's snapshot: keep what it was told (``replay_bundle.ReplayBundle.keep``)."""


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
    log : the SWF rows of the engine's jobs (matched by ``job_id``), for the snapshots.
    """

    def __init__(
        self,
        predictor: ReplayPredictor,
        params: MoldingParams,
        requests: RequestBatch,
        n_warmup: int,
        max_limit_s: float | None,
        log: pd.DataFrame | None = None,
    ) -> None:
        self.predictor = predictor
        self.params = params
        self.requests = requests
        self.n_warmup = int(n_warmup)
        self.log = log
        self.declared_limit_s = float(max_limit_s) if max_limit_s else None
        self.max_limit_s = self.declared_limit_s or 0.0
        self.rng = np.random.default_rng(params.seed)
        self.history = UserSizeHistory()
        self.hold = HoldQueue()
        self.predictions = 0
        self.decisions: dict[int, dict[str, Any]] = {}

    # -- engine notifications -------------------------------------------------------------
    def on_submit(self, engine: Any, j: int, now: float) -> SubmitDecision | None:
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
        delay = self.params.strategy == "delay"
        self.hold.due(now)
        if delay and self.hold.holding(now):
            # as on a live site (holdqueue.services.live): molded now, on the snapshot of its
            # arrival, never held on its own, submitted at the release the hold queue gives it
            held = self.hold.admit(j, now)
            return self._decide(engine, j, now, delay=False, release_s=held.release_s)
        return self._decide(engine, j, now, delay)

    def on_finish(self, engine: Any, j: int, now: float) -> None:
        if int(engine.procs[j]) == int(self.requests.procs[j]):
            # a runtime observed at the user's own size: a molded job's drawn runtime says
            # nothing new about the user's jobs and would feed the roulette wheel its own draws
            user = int(self.requests.user[j])
            self.history.finished(user, int(engine.procs[j]), float(engine.runtime[j]))

    # -- the decision ---------------------------------------------------------------------
    def _decide(
        self, engine: Any, j: int, now: float, delay: bool, release_s: float | None = None
    ) -> SubmitDecision | None:
        """Decide job ``j`` arriving ``now``; ``release_s``: a follower's release."""
        snapshot = snapshot_from_engine(engine, now, self.log)
        self.predictor.refresh(snapshot)
        request = next(iter(self.requests.take(np.array([j]))))
        request = request.at(now)
        cands = self._candidates(j, engine, snapshot)
        d = decide_arrival(snapshot, request, cands, self.predictor, self.params.rules(delay))
        self.predictions += cands.procs.size * (1 if d.later is None else 2)
        return self._submit(engine, j, now, d, cands, release_s)

    def _candidates(self, j: int, engine: Any, snapshot: Snapshot) -> Candidates:
        """Under ``downey`` the live site's rule: the sizes of the user's jobs the snapshot
        knows (``candidates.snapshot_sizes``), a newcomer the grid; under ``paper`` the seed's:
        the sizes the user ran at, with runtimes for its roulette wheel."""
        user = int(self.requests.user[j])
        paper = self.params.runtime_model == "paper"
        if paper:
            used: Any = self.history.sizes_with_runtimes(user)
        else:
            used = snapshot_sizes(snapshot, user)
        sizes = candidate_sizes(
            int(self.requests.procs[j]),
            used,
            int(engine.machine_procs),
            str(self.params.grid),
            self.params.grid_factor,
        )
        if paper:
            estimates = np.array([self._estimate(j, engine, int(s)) for s in sizes])
            return Candidates(sizes, estimates, None)
        est0 = float(engine.jobs.estimate_s[j])
        p = self.params
        return speedup_candidates(
            int(self.requests.procs[j]), sizes, est0, self.max_limit_s, p.sigma, p.downey_a
        )

    def _factor(self, j: int, size: int) -> float:
        n0 = int(self.requests.procs[j])
        return downey_factor(n0, size, self.params.downey_a, self.params.sigma)

    def _estimate(self, j: int, engine: Any, size: int) -> float:
        """The requested time the user would give at ``size`` under the ``paper`` model
        (``downey``'s are ``candidates.speedup_candidates``', the live site's rule)."""
        n0, est0 = int(self.requests.procs[j]), float(engine.jobs.estimate_s[j])
        if size == n0:
            return est0
        prev = self.history.max_estimate(int(self.requests.user[j]), size)
        return paper_estimate(n0, est0, size, prev, self.max_limit_s)

    def _runtime(self, j: int, engine: Any, size: int, estimate_s: float) -> float:
        """The job's actual runtime at ``size`` (the replay's ground truth)."""
        n0, run0 = int(self.requests.procs[j]), float(engine.jobs.runtime_s[j])
        if size == n0:
            return run0
        if self.params.runtime_model == "paper":
            past = self.history.runtimes(int(self.requests.user[j]), size)
            return min(roulette_runtime(past, self.rng), estimate_s)
        # whole seconds, as a log records them and as its time limit is asked for
        return min(float(np.ceil(run0 * self._factor(j, size))), estimate_s)

    def _submit(
        self,
        engine: Any,
        j: int,
        now: float,
        d: ArrivalDecision,
        cands: Candidates,
        follower_release_s: float | None,
    ) -> SubmitDecision | None:
        size = d.procs
        held = d.delayed or follower_release_s is not None
        release = d.release_s(now) if follower_release_s is None else follower_release_s
        self.decisions[j] = {
            "molded": size != int(self.requests.procs[j]),
            "delay_s": release - now,
            "candidates": d.now.procs.tolist(),  # the sizes tried (reported by ``tried``)
        }
        if d.delayed:
            self.hold.hold(j, now, release)
        if not held:  # submitted now, as answered on this snapshot: keep what it was told
            self.predictor.keep(int(engine.jobs.job_id[j]), now, size)
        if size == int(self.requests.procs[j]) and not held:
            return None
        # the time limit of the chosen candidate, as the live site submits it
        estimate = float(cands.req_time_s[int(np.flatnonzero(cands.procs == size)[0])])
        runtime = self._runtime(j, engine, size, estimate)
        return SubmitDecision(
            procs=size,
            estimate_s=estimate,
            runtime_s=runtime,
            release_at=release if held else None,
            reason=d.chosen,
        )
