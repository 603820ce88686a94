"""Glue between the simulator core, the database, the API and the commands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyss_adapter.core.engine import ReplayResult
from pyss_adapter.core.estimates import ESTIMATE_NAMES
from pyss_adapter.core.jobs import MODES, sim_jobs
from pyss_adapter.core.replay import SCHEDULERS, replay_jobs
from pyss_adapter.core.stats import distributions, summarise
from pyss_adapter.models import Replay
from queuecast.errors import ConflictError, InvalidInput
from queuecast.longrun import Claim, Status, enqueue, execute
from traces.core.swf import SwfTrace
from traces.models import Trace
from traces.services import swf_trace_for


@dataclass(frozen=True)
class ReplaySettings:
    """What a replay runs: checked here once for the command, the API and the task."""

    scheduler: str = "easy"
    estimates: str = "requested"
    mode: str = "default"
    processors: int | None = None

    def __post_init__(self) -> None:
        for field, value, allowed in (
            ("scheduler", self.scheduler, tuple(SCHEDULERS)),
            ("estimates", self.estimates, ESTIMATE_NAMES),
            ("mode", self.mode, MODES),
        ):
            if value not in allowed:
                raise InvalidInput(
                    f"{field} must be one of {', '.join(allowed)}; got {value!r}", field=field
                )
        if self.processors is not None and self.processors < 1:
            raise InvalidInput(
                f"processors must be >= 1; got {self.processors}", field="processors"
            )


def machine_size(swf: SwfTrace, settings: ReplaySettings) -> int:
    """``--processors`` if given, else the header's MaxProcs/MaxNodes, else the largest job."""
    size = settings.processors or swf.machine_procs
    if not size:
        raise InvalidInput(
            "the trace gives no machine size (no MaxProcs, MaxNodes or processor counts); "
            "pass processors",
            field="processors",
        )
    return int(size)


def simulate(
    swf: SwfTrace, settings: ReplaySettings, progress: Callable[[float], None] | None = None
) -> tuple[ReplayResult, dict[str, Any]]:
    """Replay a parsed trace; return the per-job result and the statistics summary."""
    procs = machine_size(swf, settings)
    try:
        jobs = sim_jobs(swf.jobs, procs, settings.mode)
        result = replay_jobs(jobs, settings.scheduler, settings.estimates, progress)
    except ValueError as exc:
        raise InvalidInput(str(exc), field="processors") from exc
    summary = summarise(result)
    summary["run"].update(trace=swf.name, processors_source=_size_source(swf, settings))
    return result, summary


def _size_source(swf: SwfTrace, settings: ReplaySettings) -> str:
    if settings.processors:
        return "given"
    return "header" if swf.header.machine_procs else "largest job"


def new_replay(trace: Trace, owner: Any, settings: ReplaySettings) -> Replay:
    """A pending replay row of a done trace, its task enqueued on commit."""
    if trace.status != Status.DONE:
        raise ConflictError(f"trace {trace.name!r} is {trace.status}; only done traces replay")
    replay = Replay.objects.create(
        trace=trace,
        owner=owner,
        scheduler=settings.scheduler,
        estimates=settings.estimates,
        mode=settings.mode,
        processors=settings.processors,
    )
    enqueue(replay, "pyss_adapter.tasks.run_replay")  # by name: no import of the task module
    return replay


def run_pending_replay(replay_id: int) -> str:
    """The task's body: claim, run and store one replay (``queuecast.longrun.execute``)."""
    return execute(Replay, replay_id, _replay_claimed)


def _replay_claimed(claim: Claim) -> dict[str, Any]:
    replay = Replay.objects.select_related("trace").get(pk=claim.pk)
    settings = ReplaySettings(replay.scheduler, replay.estimates, replay.mode, replay.processors)
    swf = swf_trace_for(replay.trace)
    claim.progress(0.1)
    result, summary = simulate(swf, settings, lambda f: claim.progress(0.1 + 0.85 * f))
    return {"result": {**summary, **distributions(result)}}
