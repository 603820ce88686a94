"""Replay a trace under baseline, molding and molding + delay; report each (seed "End-to-End
Predictions-Based Resource Management Framework for Supercomputer Jobs", Section V-C,
Tables VIII and IX).

The trace is converted once (``pyss_adapter.core.jobs.sim_jobs``, default mode) and replayed
with EASY and the requested times as estimates, as the seed does with PySS. The first
``tune_fraction`` of the arrivals warm the predictors up and are submitted unchanged under
every strategy; the figures are over the rest. ``baseline`` is the plain replay (no policy).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from jobmolding.core.guard import GUARDS, THRESHOLDS, GuardChoice, choose_guard, choose_hold
from jobmolding.core.metrics import RunOutcome, halves, summarise
from jobmolding.core.policy import STRATEGIES, MoldingParams, MoldingPolicy, ReplayPredictor
from jobmolding.core.stages import Stages
from predictor.core.state.request import RequestBatch
from pyss_adapter.core.jobs import SimJobs, sim_jobs
from pyss_adapter.core.replay import replay_jobs
from pyss_adapter.core.result import ReplayResult

PredictorFactory = Callable[["MoldingSetup"], ReplayPredictor]


@dataclass(frozen=True)
class MoldingSetup:
    """A trace ready to replay: the engine's jobs, their requests, the split, the limit.

    jobs : SimJobs (row j = job j, by arrival). requests : RequestBatch aligned with ``jobs``
    (the log's user, group, queue, ...; processors and requested time as the engine has
    them). frame : the log's rows aligned with ``jobs``. n_warmup : warm-up arrivals.
    max_limit_s : ``maxLimit``, the header's MaxRuntime; None: the policy uses the largest
    requested time among the arrivals so far.
    """

    jobs: SimJobs
    requests: RequestBatch
    frame: pd.DataFrame
    n_warmup: int
    max_limit_s: float | None


@dataclass
class StrategyRun:
    """One strategy's outcome, figures and cost."""

    name: str
    outcome: RunOutcome
    figures: dict[str, Any]
    seconds: float
    cpu_seconds: float = 0.0
    predictions: int = 0
    decisions: dict[int, dict[str, Any]] = field(default_factory=dict)
    guard: dict[str, Any] | None = None
    same_replay_as: str | None = None  # the strategy whose replay this one's equals


def check_trace(frame: pd.DataFrame) -> None:
    """Raise ``ValueError`` saying what the log lacks for a molding replay.

    Molding picks among the sizes each user used before, so it needs user ids; the replay
    needs run times; and a log without a single wait (field 3) is a model's output rather
    than a machine's history (the Lublin logs), whose users and habits molding exploits.
    """
    if len(frame) == 0:
        raise ValueError("the trace has no jobs")
    if (frame["user_id"].to_numpy() < 0).all():
        raise ValueError(
            "the trace has no user ids (SWF field 12 is -1 throughout): molding picks among "
            "the sizes each user used before, so it needs a user history"
        )
    if (frame["wait_time"].to_numpy() < 0).all():
        raise ValueError(
            "the trace has no wait times (SWF field 3 is -1 throughout): molding needs a "
            "machine's log with its users' history, not a model-generated one"
        )
    if (frame["run_time"].to_numpy() < 0).all():
        raise ValueError("the trace has no run times (SWF field 4 is -1 throughout)")


def prepare(
    frame: pd.DataFrame,
    machine_procs: int,
    tune_fraction: float,
    max_runtime_s: float | None = None,
) -> MoldingSetup:
    """Convert a log (``read_swf(...).jobs``) for the replays; ``tune_fraction`` in (0, 1)."""
    if not 0.0 < tune_fraction < 1.0:
        raise ValueError(f"tune_fraction must be in (0, 1), got {tune_fraction}")
    check_trace(frame)
    frame = frame.reset_index(drop=True)
    # job_id := row position, so the converted jobs point back at their log rows
    jobs = sim_jobs(frame.assign(job_id=np.arange(len(frame))), machine_procs, "default")
    rows = frame.iloc[jobs.job_id].reset_index(drop=True)
    jobs = replace(jobs, job_id=rows["job_id"].to_numpy(np.int64))
    requests = replace(
        RequestBatch.from_jobs(rows),
        procs=jobs.n_procs.astype(np.int64),
        req_time_s=jobs.estimate_s.astype(float),
        submit_s=jobs.submit_s.astype(float),
    )
    limit = float(max_runtime_s) if max_runtime_s else None
    n_warmup = int(round(tune_fraction * len(jobs)))
    return MoldingSetup(jobs, requests, rows, n_warmup, limit)


def outcome_of(result: ReplayResult, n_warmup: int) -> RunOutcome:
    jobs = result.jobs
    evaluated = np.arange(len(jobs)) >= n_warmup
    return RunOutcome(
        arrival_s=jobs.submit_s,
        release_s=np.asarray(result.release_s, float),
        start_s=result.start_s,
        runtime_s=np.asarray(result.runtime_s, float),
        procs=np.asarray(result.n_procs),
        original_procs=jobs.n_procs,
        original_runtime_s=jobs.runtime_s,
        evaluated=evaluated,
        machine_procs=jobs.machine_procs,
    )


def run_strategy(
    setup: MoldingSetup,
    params: MoldingParams,
    make_predictor: PredictorFactory,
    progress: Callable[[float], None] | None = None,
) -> StrategyRun:
    """Replay once under ``params.strategy``."""
    began, began_cpu = time.perf_counter(), time.process_time()
    policy = None
    if params.strategy != "baseline":
        policy = MoldingPolicy(
            make_predictor(setup),
            params,
            setup.requests,
            setup.n_warmup,
            setup.max_limit_s,
            setup.frame,
        )
    result = replay_jobs(setup.jobs, "easy", "requested", progress, policy=policy)
    if progress is not None:
        progress(1.0)  # the engine reports every so many arrivals, not at its end
    outcome = outcome_of(result, setup.n_warmup)
    return StrategyRun(
        name=params.strategy,
        outcome=outcome,
        figures=summarise(outcome),
        seconds=time.perf_counter() - began,
        cpu_seconds=time.process_time() - began_cpu,
        predictions=0 if policy is None else policy.predictions,
        decisions={} if policy is None else policy.decisions,
    )


def parse_strategies(text: str | Sequence[str]) -> list[str]:
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown or not names:
        raise ValueError(f"unknown strategies {unknown or '(none)'}; choose from {STRATEGIES}")
    return list(dict.fromkeys(names))


def evaluate(
    setup: MoldingSetup,
    strategies: Sequence[str],
    params: MoldingParams,
    make_predictor: PredictorFactory,
    progress: Callable[[float], None] | None = None,
) -> dict[str, StrategyRun]:
    """Every strategy in turn. With ``params.guard`` None, each acting strategy's guard is
    first chosen on the tuning part (``guard.choose_guard``; those replays are counted in
    its wall and CPU time). Progress runs through every replay, the tuning part's included,
    each weighted by its planned cost (:func:`planned_weights`)."""
    runs: dict[str, StrategyRun] = {}
    used: dict[str, MoldingParams] = {}
    tuned: dict[str, GuardChoice] = {}
    weights = planned_weights(setup, strategies, params)
    stages, end = Stages(progress, sum(weights)), 0.0
    for name, weight in zip(strategies, weights, strict=True):
        end += weight
        began, began_cpu = time.perf_counter(), time.process_time()
        p, chosen = _tuned_params(
            setup, replace(params, strategy=name), make_predictor, tuned, stages
        )
        same = same_replay(p, used)
        if same is None:
            runs[name] = run_strategy(
                setup, p, make_predictor, stages.stage(replay_weight(setup, p))
            )
        else:
            runs[name] = replace(runs[same], name=name, same_replay_as=same, guard=None)
        stages.reach(end)
        used[name] = p
        if chosen is not None:
            runs[name].guard = chosen
        if same is not None or chosen is not None:  # its own time: tuning, then its replay
            runs[name].seconds = time.perf_counter() - began
            runs[name].cpu_seconds = time.process_time() - began_cpu
    return runs


BASELINE_WEIGHT = 0.01  # a plain replay's cost per job against an acting arrival's (no predictions)


def replay_weight(setup: MoldingSetup, p: MoldingParams) -> float:
    """A replay's planned cost for progress: the arrivals it decides on (each asks the
    predictor for every candidate), or :data:`BASELINE_WEIGHT` per job of a plain replay.
    On whole logs a plain replay costs under 0.1 % of an acting one (docs/results.md)."""
    if p.strategy == "baseline":
        return BASELINE_WEIGHT * len(setup.jobs)
    return float(len(setup.jobs) - setup.n_warmup)


def planned_weights(
    setup: MoldingSetup, strategies: Sequence[str], params: MoldingParams
) -> list[float]:
    """Each strategy's planned cost (:func:`replay_weight` units): its replay, and with the
    guard to choose, the tuning part's replays it runs first (``guard.choose_guard``: a plain
    one and one per guard below 1, once for every strategy; ``guard.choose_hold``, delay:
    one per hold threshold below 1). A stage that does not run (a replay reused, no hold
    tried) is skipped over."""
    n_tune = setup.n_warmup  # ``guard.tuning_setup``: these jobs, half of them warm-up
    plain, acting = BASELINE_WEIGHT * n_tune, float(n_tune - n_tune // 2)
    out: list[float] = []
    guard_tuned = False
    for name in strategies:
        weight = replay_weight(setup, replace(params, strategy=name))
        if name != "baseline" and params.guard is None:
            if not guard_tuned:
                weight += plain + acting * sum(g < 1.0 for g in GUARDS)
                guard_tuned = True
            if name == "delay":
                weight += acting * sum(t < 1.0 for t in THRESHOLDS)
        out.append(weight)
    return out


def same_replay(p: MoldingParams, used: dict[str, MoldingParams]) -> str | None:
    """The strategy already replayed whose every decision ``p`` would repeat, or None.

    Delay whose hold threshold (or guard) is 1 never holds: each arrival's decision is
    molding's (``arrival.decide_arrival`` keeps the molded size; the 30% rule cannot pass
    with a required gain of 100%), so its replay is molding's, job by job. The replay is
    then not run twice (issue 18: a whole-log replay's cost); the JSON says so."""
    mold = used.get("molding")
    if p.strategy != "delay" or mold is None or max(p.threshold, p.guard or 0.0) < 1.0:
        return None
    return "molding" if replace(p, strategy="molding", threshold=mold.threshold) == mold else None


def _tuned_params(
    setup: MoldingSetup,
    p: MoldingParams,
    make_predictor: PredictorFactory,
    tuned: dict[str, GuardChoice],
    stages: Stages | None = None,
) -> tuple[MoldingParams, dict[str, Any] | None]:
    """``p`` with its guard (and, for delay, its hold threshold) chosen on the tuning part
    when ``p.guard`` is None; the choice's record. ``tuned`` keeps molding's choice;
    ``stages`` gets each tuning replay's progress."""
    if p.guard is not None:
        return p, None
    if p.strategy == "baseline":
        return replace(p, guard=0.0), None

    def figures(s: MoldingSetup, q: MoldingParams) -> dict[str, Any]:
        part = None if stages is None else stages.stage(replay_weight(s, q))
        run = run_strategy(s, q, make_predictor, part)
        return {**run.figures, "halves": halves(run.outcome)}

    if "molding" not in tuned:
        mold = replace(p, strategy="molding", guard=0.0)
        tuned["molding"] = choose_guard(setup, mold, figures)
    choice = tuned["molding"]
    p = replace(p, guard=choice.guard)
    if p.strategy == "molding":
        return p, choice.as_dict()
    if choice.guard >= 1.0:  # no molding pays: no hold either
        never = {"threshold": 1.0, "chosen_on": "tuning part", "tried": []}
        return replace(p, threshold=1.0), {**choice.as_dict(), "hold": never}
    at = [t for t in choice.tried if t["guard"] == choice.guard][0]
    hold = choose_hold(setup, p, figures, at)
    return replace(p, threshold=hold["threshold"]), {**choice.as_dict(), "hold": hold}


def report(runs: dict[str, StrategyRun], params: MoldingParams, extra: dict[str, Any]) -> dict:
    """The JSON of ``evaluate_molding``: one entry per strategy and ``params``."""
    out: dict[str, Any] = {}
    for name, run in runs.items():
        out[name] = {
            **run.figures,
            "seconds": round(run.seconds, 2),
            "cpu_seconds": round(run.cpu_seconds, 2),
            "predictions": run.predictions,
            "predictions_per_cpu_s": (
                round(run.predictions / run.cpu_seconds, 1) if run.cpu_seconds else None
            ),
        }
        if run.guard is not None:
            out[name]["guard"] = run.guard
        if run.same_replay_as is not None:
            out[name]["same_replay_as"] = run.same_replay_as
    settings = {k: v for k, v in asdict(params).items() if k != "strategy"}
    if params.guard is None:
        settings["guard"] = "chosen on the tuning part per strategy (see each strategy's guard)"
    out["params"] = {**settings, **extra}
    return out
