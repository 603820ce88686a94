"""One entry point: convert, pick a scheduler and estimates, run the engine."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from pyss_adapter.core.conservative import ConservativeScheduler
from pyss_adapter.core.easy import EasyScheduler
from pyss_adapter.core.engine import Engine, ReplayResult, Scheduler
from pyss_adapter.core.estimates import EstimateSource, estimate_source
from pyss_adapter.core.fcfs import FcfsScheduler
from pyss_adapter.core.jobs import SimJobs, sim_jobs
from pyss_adapter.core.placement.base import Placement
from pyss_adapter.core.placement.usage import UsageModel
from pyss_adapter.core.policy import SubmitPolicy

SCHEDULERS: dict[str, type] = {
    "fcfs": FcfsScheduler,
    "easy": EasyScheduler,
    "conservative": ConservativeScheduler,
}


def make_scheduler(name: str) -> Scheduler:
    if name not in SCHEDULERS:
        raise ValueError(f"scheduler must be one of {tuple(SCHEDULERS)}, got {name!r}")
    return SCHEDULERS[name]()


def replay_jobs(
    jobs: SimJobs,
    scheduler: str = "easy",
    estimates: str | EstimateSource | np.ndarray | Callable | None = "requested",
    progress: Callable[[float], None] | None = None,
    policy: SubmitPolicy | None = None,
    placement: Placement | None = None,
    usage: UsageModel | None = None,
    cores_per_node: tuple[int, str] = (8, "virtual"),
) -> ReplayResult:
    """Replay converted jobs; see :class:`pyss_adapter.core.engine.Engine`.

    ``policy`` sees every arrival and may resize or hold it (``core/policy.py``).
    ``placement`` (with the jobs' ``usage`` and ``(cores per node, source)``) puts the
    started jobs on nodes (``core/placement``).
    """
    engine = Engine(
        jobs,
        make_scheduler(scheduler),
        estimate_source(estimates),
        progress=progress,
        policy=policy,
        placement=placement,
    )
    if placement is not None:
        if usage is None:
            raise ValueError("a placement needs the jobs' usage model")
        usage.start_s = engine.start_s  # the trace model reads each job's start
        placement.bind(engine, usage, *cores_per_node)
    result = engine.run()
    if placement is not None:
        result.placement_log = placement.log.arrays()
    result.meta.update(mode=jobs.mode, machine_procs=jobs.machine_procs, notes=dict(jobs.notes))
    return result


def replay(
    jobs: pd.DataFrame,
    machine_procs: int,
    *,
    scheduler: str = "easy",
    estimates: str | EstimateSource | np.ndarray | Callable | None = "requested",
    mode: str = "default",
    progress: Callable[[float], None] | None = None,
) -> ReplayResult:
    """Replay an SWF jobs table (``read_swf(...).jobs``) on ``machine_procs`` processors."""
    return replay_jobs(sim_jobs(jobs, machine_procs, mode), scheduler, estimates, progress)


def with_simulated_waits(
    jobs: pd.DataFrame, machine_procs: int, *, scheduler: str = "easy"
) -> pd.DataFrame:
    """A copy of ``jobs`` whose wait times (SWF field 3) come from a replay.

    For logs that carry no waits (model-generated ones such as the Lublin traces,
    field 3 = -1 throughout): the jobs are replayed in the default mode with the
    requested times as estimates, and each job's simulated start - submit becomes
    its wait, rounded to the second as in a real log.
    """
    result = replay(jobs, machine_procs, scheduler=scheduler, estimates="requested")
    waits = pd.Series(result.wait_s, index=result.jobs.job_id)
    out = jobs.copy()
    out["wait_time"] = np.round(waits.loc[out["job_id"].to_numpy()].to_numpy())
    return out
