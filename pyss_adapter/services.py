"""Glue between the simulator core, the database, the API and the commands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from pyss_adapter.core.engine import ReplayResult
from pyss_adapter.core.estimates import ESTIMATE_NAMES
from pyss_adapter.core.jobs import MODES, SimJobs, sim_jobs
from pyss_adapter.core.placement import OPTION_KEYS, PLACEMENT_NAMES, make_placement
from pyss_adapter.core.placement.base import PlacementError, resolve_cores_per_node
from pyss_adapter.core.placement.usage import (
    KNOWLEDGE,
    MODELS,
    UsageError,
    read_azure,
    read_usage_trace,
    usage_for_jobs,
)
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
    placement: str = ""
    placement_options: dict[str, Any] = dc_field(default_factory=dict)
    cores_per_node: int | None = None
    usage_model: str = "constant"
    usage_rho: float = 0.1
    usage_corr: str = "rank"
    usage_sample_s: float = 300.0
    usage_knowledge: str = "oracle"
    usage_fill: float | None = None
    usage_file: str = ""  # trace / azure models: a file read by the command (not the API)
    seed: int = 0

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
        if self.placement:
            self._check_placement()

    def _check_placement(self) -> None:
        for name, value, allowed in (
            ("placement", self.placement, PLACEMENT_NAMES),
            ("usage_model", self.usage_model, MODELS),
            ("usage_knowledge", self.usage_knowledge, KNOWLEDGE),
            ("usage_corr", self.usage_corr, ("rank", "job")),
        ):
            if value not in allowed:
                raise InvalidInput(
                    f"{name} must be one of {', '.join(allowed)}; got {value!r}", field=name
                )
        for name, value, ok, rule in (
            ("cores_per_node", self.cores_per_node, lambda v: v is None or v >= 1, ">= 1"),
            ("usage_rho", self.usage_rho, lambda v: 0 < v <= 1, "in (0, 1]"),
            ("usage_sample_s", self.usage_sample_s, lambda v: v > 0, "> 0"),
            ("usage_fill", self.usage_fill, lambda v: v is None or 0 <= v <= 1, "in [0, 1]"),
        ):
            if not ok(value):
                raise InvalidInput(f"{name} must be {rule}; got {value}", field=name)
        if self.usage_model in ("trace", "azure") and not self.usage_file:
            raise InvalidInput(
                f"usage model {self.usage_model} needs usage_file (--usage-file PATH)",
                field="usage_file",
            )
        try:
            self.make_placement()
        except (ValueError, TypeError) as exc:
            raise InvalidInput(str(exc), field="placement_options") from exc

    def make_placement(self) -> Any:
        options = {"seed": self.seed, **self.placement_options}
        if "seed" not in OPTION_KEYS[self.placement]:
            options.pop("seed")
        return make_placement(self.placement, **options)

    def placement_record(self) -> dict[str, Any]:
        """Everything but the policy name, as stored with a replay row."""
        return {
            "options": dict(self.placement_options),
            "cores_per_node": self.cores_per_node,
            "usage_model": self.usage_model,
            "usage_rho": self.usage_rho,
            "usage_corr": self.usage_corr,
            "usage_sample_s": self.usage_sample_s,
            "usage_knowledge": self.usage_knowledge,
            "usage_fill": self.usage_fill,
            "usage_file": self.usage_file,
            "seed": self.seed,
        }

    @classmethod
    def from_record(
        cls, base: dict[str, Any], placement: str, record: dict[str, Any]
    ) -> ReplaySettings:
        record = dict(record or {})
        return cls(
            **base, placement=placement, placement_options=record.pop("options", {}), **record
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
    except ValueError as exc:
        raise InvalidInput(str(exc), field="processors") from exc
    if settings.placement:
        result = _placed(swf, jobs, settings, progress)
    else:
        try:
            result = replay_jobs(jobs, settings.scheduler, settings.estimates, progress)
        except ValueError as exc:
            raise InvalidInput(str(exc), field="processors") from exc
    summary = summarise(result)
    summary["run"].update(trace=swf.name, processors_source=_size_source(swf, settings))
    return result, summary


def _placed(
    swf: SwfTrace,
    jobs: SimJobs,
    settings: ReplaySettings,
    progress: Callable[[float], None] | None,
) -> ReplayResult:
    """A replay with a placement: the usage model from field 6, nodes from the header."""
    try:
        series = read_usage_trace(settings.usage_file) if settings.usage_model == "trace" else None
        azure = read_azure(settings.usage_file) if settings.usage_model == "azure" else None
    except (OSError, UsageError, ValueError, KeyError) as exc:
        raise InvalidInput(f"usage_file: {exc}", field="usage_file") from exc
    try:
        usage = usage_for_jobs(
            jobs,
            model=settings.usage_model,
            rho=settings.usage_rho,
            corr=settings.usage_corr,
            sample_s=settings.usage_sample_s,
            knowledge=settings.usage_knowledge,
            seed=settings.seed,
            fill=settings.usage_fill,
            series=series,
            azure=azure,
        )
    except UsageError as exc:
        raise InvalidInput(str(exc), field="usage_fill") from exc
    header = swf.header
    cores = resolve_cores_per_node(settings.cores_per_node, header.max_procs, header.max_nodes)
    try:
        return replay_jobs(
            jobs,
            settings.scheduler,
            settings.estimates,
            progress,
            placement=settings.make_placement(),
            usage=usage,
            cores_per_node=cores,
        )
    except PlacementError as exc:
        raise InvalidInput(str(exc), field="placement") from exc


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
        placement=settings.placement,
        placement_options=settings.placement_record() if settings.placement else {},
    )
    enqueue(replay, "pyss_adapter.tasks.run_replay")  # by name: no import of the task module
    return replay


def run_pending_replay(replay_id: int) -> str:
    """The task's body: claim, run and store one replay (``queuecast.longrun.execute``)."""
    return execute(Replay, replay_id, _replay_claimed)


def _replay_claimed(claim: Claim) -> dict[str, Any]:
    replay = Replay.objects.select_related("trace").get(pk=claim.pk)
    base = {
        "scheduler": replay.scheduler,
        "estimates": replay.estimates,
        "mode": replay.mode,
        "processors": replay.processors,
    }
    settings = ReplaySettings.from_record(base, replay.placement, replay.placement_options)
    swf = swf_trace_for(replay.trace)
    claim.progress(0.1)
    result, summary = simulate(swf, settings, lambda f: claim.progress(0.1 + 0.85 * f))
    return {"result": {**summary, **distributions(result)}}
