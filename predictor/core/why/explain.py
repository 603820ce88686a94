"""What a request waits for, and the jobs ahead of it.

With EASY forward from the queue (``forward``):

- ``start`` = the request's predicted start behind the whole queue;
- ``alone`` = its predicted start with the queue emptied (only the running jobs left).

The request waits for

- ``hold``: it is held by the hold queue until its release (the caller says so);
- ``nothing``: ``start == now``, it starts at once;
- ``processors``: ``start == alone > now``: nobody queued delays it, it waits for running
  jobs to free ``procs`` processors (EASY's shadow time for it);
- ``jobs_ahead``: ``start > alone``: the queued jobs ahead start first, in arrival order
  (EASY's first-come first-served head), and it follows them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from predictor.core.why.forward import Profiles, plan, start_of
from predictor.core.why.queue import QueueState

REASONS = ("hold", "nothing", "processors", "jobs_ahead")


@dataclass(frozen=True)
class Ahead:
    """The jobs ahead of the request (absolute seconds; arrays in the order given).

    running_procs, running_end_s : the running jobs, by expected end.
    queued_procs, queued_start_s, queued_end_s : the queued jobs ahead, in arrival order,
        with their predicted starts and ends in the EASY forward.
    """

    running_procs: np.ndarray
    running_end_s: np.ndarray
    queued_procs: np.ndarray
    queued_start_s: np.ndarray
    queued_end_s: np.ndarray


@dataclass(frozen=True)
class Why:
    """Why the request waits: ``reason`` (one of ``REASONS``), predicted start and wait."""

    reason: str
    now_s: float
    start_s: float
    alone_start_s: float
    free_procs: int
    procs: int
    ahead: Ahead

    @property
    def wait_s(self) -> float:
        return self.start_s - self.now_s


def explain(
    state: QueueState,
    procs: int,
    estimate_s: float,
    *,
    held_until_s: float | None = None,
    profiles: Profiles | None = None,
) -> Why:
    """Why a request of ``procs`` for ``estimate_s`` joining ``state`` waits.

    ``held_until_s``: the hold queue keeps the request until then (the queue it would join
    then is not known, so the forward is from now and the reason is ``hold``).
    ``profiles``: the queue's forward runs kept across requests (``forward.plan``).
    """
    forward = plan(state, procs, estimate_s, profiles)
    empty = np.zeros(0)
    nobody = replace(state, queue_procs=empty.astype(np.int64), queue_estimate_s=empty)
    if profiles is not None:  # the running jobs' run, kept: the same start (start_profile)
        alone = profiles.get(nobody).start_s(procs, max(float(estimate_s), 1.0))
    else:
        alone = start_of(nobody, procs, estimate_s)
    start = forward.start_s
    if held_until_s is not None and held_until_s > state.now_s:
        reason = "hold"
    elif start <= state.now_s:
        reason = "nothing"
    elif start <= alone:
        reason = "processors"
    else:
        reason = "jobs_ahead"
    order = np.argsort(state.running_end_s, kind="stable")
    ahead = Ahead(
        running_procs=state.running_procs[order],
        running_end_s=np.maximum(state.running_end_s[order], state.now_s + 1.0),
        queued_procs=state.queue_procs,
        queued_start_s=forward.queue_start_s,
        queued_end_s=forward.queue_start_s + state.queue_estimate_s,
    )
    return Why(reason, state.now_s, start, alone, state.free_procs, int(procs), ahead)
