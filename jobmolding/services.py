"""Glue between the molding core, the database, the API and the command."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from jobmolding.core.evaluate import evaluate, parse_strategies, prepare, report
from jobmolding.core.fit_memo import FitMemo
from jobmolding.core.metrics import plot_data
from jobmolding.core.policy import STRATEGIES, MoldingParams
from jobmolding.core.replay_bundle import ReplayBundle
from jobmolding.core.runtime_models import RUNTIME_MODELS
from jobmolding.core.tried import candidates_tried
from jobmolding.models import MoldingRun
from jobmolding.plots import PLOTS, plot_png
from predictor.core.runtime.registry import FACTORIES as RUNTIME_FACTORIES
from predictor.core.wait.registry import FACTORIES as WAIT_FACTORIES
from predictor.services.predict import service_methods
from queuecast.errors import ConflictError, InvalidInput, NotFoundError
from queuecast.longrun import Claim, Status, enqueue, execute
from traces.core.swf import SwfTrace
from traces.models import Trace
from traces.services import swf_trace_for

#: What decides in a replay: the live service's arrival decision and bundle call.
DECISION = "jobmolding.core.arrival.decide_arrival"
#: The registered runtime methods, and ``choose`` (the method the tuning part chooses, with
#: calibrated probabilities: ``predictor.core.bundle.fit_bundle``), what the live service uses.
RUNTIME_METHODS = (*RUNTIME_FACTORIES, "choose")
PREDICT = (
    "jobmolding.core.live_bundle.LiveBundle (predict_requests and the queue-based start, "
    "combined by the headline rule kept at each fit as a site keeps it) on snapshot_from_engine "
    "snapshots"
)
#: Every registered wait method can decide a replay; the default is the live service's
#: (``service_methods``). ``sim``, ``median`` and ``zero`` replay a whole log in seconds to
#: minutes; the others refit and score on the replay's growing history, about ten times the
#: CPU (docs/molding.md: ``auto`` waits with the
#: runtime method chosen on the tuning part, as the live service answers, 116 CPU-s on
#: SDSC-SP2's first 10,000 jobs against 11.5 with ``sim`` and ``rangeset``).
REPLAY_WAIT_METHODS = tuple(WAIT_FACTORIES)


@dataclass(frozen=True)
class MoldingSettings:
    """What a molding evaluation runs; checked once for the command, the API and the task."""

    strategies: tuple[str, ...] = STRATEGIES
    runtime_model: str = "downey"  # as the live sites decide; paper: the seed's, to compare
    seed: int = 0
    tune_fraction: float = 0.2
    sigma: float = 1.0
    # what the live service answers with, unless a run asks for another (docs/molding.md)
    wait_method: str = field(default_factory=lambda: service_methods()[0])
    runtime_method: str = field(default_factory=lambda: service_methods()[1])
    guard: float | None = None
    work_limit: float = 1.0

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "strategies", tuple(parse_strategies(self.strategies)))
        except ValueError as exc:
            raise InvalidInput(str(exc), field="strategies") from exc
        if self.runtime_model not in RUNTIME_MODELS:
            raise InvalidInput(
                f"runtime_model must be one of {', '.join(RUNTIME_MODELS)}; "
                f"got {self.runtime_model!r}",
                field="runtime_model",
            )
        if not (math.isfinite(self.tune_fraction) and 0.0 < self.tune_fraction < 1.0):
            raise InvalidInput(
                f"tune_fraction must be in (0, 1); got {self.tune_fraction}",
                field="tune_fraction",
            )
        if not (math.isfinite(self.sigma) and self.sigma > 0):
            raise InvalidInput(f"sigma must be > 0; got {self.sigma}", field="sigma")
        if self.wait_method not in REPLAY_WAIT_METHODS:
            raise InvalidInput(
                f"wait_method must be one of {', '.join(REPLAY_WAIT_METHODS)}; "
                f"got {self.wait_method!r}",
                field="wait_method",
            )
        if self.runtime_method not in RUNTIME_METHODS:
            raise InvalidInput(
                f"runtime_method must be one of {', '.join(RUNTIME_METHODS)}; "
                f"got {self.runtime_method!r}",
                field="runtime_method",
            )
        if self.guard is not None and not (math.isfinite(self.guard) and 0 <= self.guard <= 1):
            raise InvalidInput(
                f"guard must be in [0, 1] or auto (chosen on the tuning part); got {self.guard}",
                field="guard",
            )

        if math.isnan(self.work_limit) or self.work_limit < 1.0:
            raise InvalidInput(
                f"work_limit must be >= 1 (1: a molded job never does more CPU work; inf: "
                f"the seed's rule); got {self.work_limit}",
                field="work_limit",
            )

    def params(self) -> MoldingParams:
        return MoldingParams(
            runtime_model=self.runtime_model,
            sigma=self.sigma,
            seed=self.seed,
            guard=self.guard,
            work_limit=self.work_limit,
        )


def evaluate_swf(
    swf: SwfTrace, settings: MoldingSettings, progress: Callable[[float], None] | None = None
) -> dict[str, Any]:
    """Replay ``swf`` under every strategy; the command's JSON plus ``plot_data``."""
    if not swf.machine_procs:
        raise InvalidInput("the trace gives no machine size (MaxProcs)", field="trace")
    try:
        setup = prepare(swf.jobs, swf.machine_procs, settings.tune_fraction, swf.header.max_runtime)
    except ValueError as exc:
        raise InvalidInput(str(exc), field="trace") from exc

    memo = FitMemo()  # the tuning part's replays fit equal histories first (fit_memo)
    made: list[ReplayBundle] = []

    def make_predictor(s: Any) -> ReplayBundle:
        made.append(
            ReplayBundle(
                s.jobs.machine_procs,
                settings.wait_method,
                settings.runtime_method,
                random_state=settings.seed,
                memo=memo,
            )
        )
        return made[-1]

    runs = evaluate(setup, settings.strategies, settings.params(), make_predictor, progress)
    extra = {
        "trace": swf.name,
        "jobs": len(setup.jobs),
        "warmup_jobs": setup.n_warmup,
        "tune_fraction": settings.tune_fraction,
        "machine_procs": int(setup.jobs.machine_procs),
        "max_limit_s": setup.max_limit_s,
        "wait_method": settings.wait_method,
        "runtime_method": settings.runtime_method,
        **live_methods(settings),
        "decision": DECISION,
        "predict": PREDICT,
        "scheduler": "easy, requested times as estimates",
        "fits": memo.as_dict(),
        "wait_rules_kept": dict(Counter(r for b in made for r in b.wait_rules_)),
        "headline_rules_kept": dict(Counter(r for b in made for r in b.headline_rules_)),
    }
    out = report(runs, settings.params(), extra)
    for name, run in runs.items():  # which sizes "choose the size" had to choose from
        if run.decisions:
            out[name]["candidates"] = candidates_tried(run.decisions)
    out["plot_data"] = plot_data({name: run.outcome for name, run in runs.items()})
    return out


def live_methods(settings: MoldingSettings) -> dict[str, Any]:
    """What the live service answers with (``predictor.services.predict.service_methods``)
    beside the replay's methods, and whether they are the same: a replay with other methods
    proves the decision code, not the live answers (docs/molding.md)."""
    wait, runtime = service_methods()
    return {
        "live_wait_method": wait,
        "live_runtime_method": runtime,
        "same_methods_as_live": (settings.wait_method, settings.runtime_method) == (wait, runtime),
    }


def public_result(result: dict[str, Any]) -> dict[str, Any]:
    """The result without the plot data (what the command writes as JSON)."""
    return {k: v for k, v in result.items() if k != "plot_data"}


def store_finished(
    settings: MoldingSettings, result: dict[str, Any], trace: Trace | None, swf_path: str
) -> MoldingRun:
    """A done run row written in one transaction (the command stores only whole results)."""
    with transaction.atomic():
        run = MoldingRun.objects.create(
            trace=trace, swf_path=swf_path, status=Status.DONE, progress=1.0, result=result,
            **_fields(settings),
        )  # fmt: skip
    return run


#: The settings a run row stores (its columns), read back by :func:`settings_of`.
STORED = ("strategies", "runtime_model", "seed", "tune_fraction", "sigma", "wait_method",
          "runtime_method")  # fmt: skip


def _fields(settings: MoldingSettings) -> dict[str, Any]:
    fields = {name: getattr(settings, name) for name in STORED}
    return {**fields, "strategies": list(settings.strategies)}


def new_molding_run(trace: Trace, owner: Any, settings: MoldingSettings) -> MoldingRun:
    """A pending run of a done trace, its task sent on commit."""
    if trace.status != Status.DONE:
        raise ConflictError(f"trace {trace.name!r} is {trace.status}; only done traces replay")
    with transaction.atomic():
        run = MoldingRun.objects.create(trace=trace, owner=owner, **_fields(settings))
        enqueue(run, "jobmolding.tasks.run_molding")
    return run


def run_pending_molding(run_id: int) -> str:
    """The task's body: claim, evaluate and store one run (``queuecast.longrun.execute``)."""
    return execute(MoldingRun, run_id, _run_claimed)


def settings_of(run: MoldingRun) -> MoldingSettings:
    return MoldingSettings(**{name: getattr(run, name) for name in STORED})


def _run_claimed(claim: Claim) -> dict[str, Any]:
    run = MoldingRun.objects.select_related("trace").get(pk=claim.pk)
    swf = swf_trace_for(run.trace)
    claim.progress(0.05)
    result = evaluate_swf(swf, settings_of(run), lambda f: claim.progress(0.05 + 0.9 * f))
    return {"result": result}


def plot_of(run: MoldingRun, name: str) -> bytes:
    """The PNG ``name`` of a done run."""
    if name not in PLOTS:
        raise NotFoundError(f"unknown plot {name!r}; plots are {', '.join(PLOTS)}", field="name")
    if run.status != Status.DONE or "plot_data" not in (run.result or {}):
        raise ConflictError(f"molding run {run.pk} is {run.status}: no plots yet")
    return plot_png(run.result, name)
