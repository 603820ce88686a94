"""Submissions the simulated system decides while it runs (issue 8, the engine hook).

Job molding and delayed submission (seed 002, "Job molding" and "Delayed
submission") change a job *when it arrives*, from what the system knows at that
moment. The engine gives every arrival to a :class:`SubmitPolicy` before queueing
it; the policy answers with a :class:`SubmitDecision` (or ``None``: submit as
requested). A decision may

- resize the job (``procs``: molding), with its new requested time (``estimate_s``)
  and its actual runtime at that size (``runtime_s``: the replay's ground truth,
  from whatever runtime model the policy uses);
- postpone it (``release_at``, >= now): the job is *held* and enters the queue at
  that time, as a submission (order 0) of that instant. Released jobs enter before
  the log's arrivals of the same instant (they were submitted earlier), and among
  themselves in submit order. Its ``on_submit`` is not called again at the release
  unless the decision says ``ask_again``.

The optional notifications ``on_start`` and ``on_finish`` let a policy follow what
the simulated system knows (simulated waits of started jobs, runtimes of finished
ones), never the log's own waits. The engine calls them in event order, a start
from inside the scheduling pass that decides it, a finish before the pass its
termination triggers.

A policy reads the engine through its public attributes (read-only by contract):
``queue`` (queued indices in arrival order), ``running_jobs()``, ``procs``,
``requested``, ``est``, ``runtime``, ``start_s``, ``release_s``, ``finished``,
``machine_procs``, ``jobs`` (the input request) and ``job_state(j)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pyss_adapter.core.engine import Engine


@dataclass(frozen=True)
class SubmitDecision:
    """What to do with one arrival; ``None`` fields keep the job's current value.

    procs : int, new processor count (1 <= procs <= machine size).
    estimate_s : float, new requested time in seconds (>= 1); also the scheduler's
        estimate when the engine's estimates are the requested times.
    runtime_s : float, the job's actual runtime at the new size (>= 0).
    release_at : float, submit the job at this time instead of now (>= now).
    ask_again : bool, call ``on_submit`` again when a held job is released.
    reason : object, free-form record of why (kept by the engine per job).
    """

    procs: int | None = None
    estimate_s: float | None = None
    runtime_s: float | None = None
    release_at: float | None = None
    ask_again: bool = False
    reason: object = None


@runtime_checkable
class SubmitPolicy(Protocol):
    """Sees each arrival with the current state; may resize or postpone it.

    ``on_start(engine, j, now)`` and ``on_finish(engine, j, now)`` are optional:
    the engine calls them only when the policy defines them.
    """

    def on_submit(self, engine: Engine, j: int, now: float) -> SubmitDecision | None: ...


class InvalidDecision(ValueError):
    """A policy's decision cannot be applied; the message names the job and the field."""


def check_decision(engine: Engine, j: int, decision: SubmitDecision, now: float) -> None:
    """Raise :class:`InvalidDecision` unless every field of ``decision`` is applicable."""
    where = f"job index {j} (job {int(engine.jobs.job_id[j])}) at t={now:g}"
    if decision.procs is not None and not 1 <= decision.procs <= engine.machine_procs:
        raise InvalidDecision(
            f"{where}: procs must be in 1..{engine.machine_procs}, got {decision.procs}"
        )
    for name, low in (("estimate_s", 1.0), ("runtime_s", 0.0)):
        value = getattr(decision, name)
        if value is not None and not (math.isfinite(value) and value >= low):
            raise InvalidDecision(f"{where}: {name} must be finite and >= {low:g}, got {value}")
    if decision.release_at is not None and not (
        math.isfinite(decision.release_at) and decision.release_at >= now
    ):
        raise InvalidDecision(f"{where}: release_at must be >= now, got {decision.release_at}")
