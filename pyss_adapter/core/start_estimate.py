"""A start-time estimate from simulation, what ``squeue --start`` gives (issue 5, item 6).

At a target job's submission ``t`` we know, from the log, the jobs running at ``t``
(with their real start times) and the jobs queued at ``t`` (submitted no later,
not started yet); runtimes are unknown, so every job is assumed to run for its
requested time (its run time when the request is missing). We simulate EASY
forward from that state, with no further arrivals, and the target's simulated
start minus ``t`` is its predicted wait.

The forward simulation is the replay engine itself (:meth:`Engine.from_state` with
:class:`~pyss_adapter.core.easy.EasyScheduler`), stopped when the target starts:
one EASY implementation for replays and estimates.

The sets at ``t`` are kept by one sweep over the targets in time order (jobs
enter at their submission, move to running at their start, leave at their end),
so the cost is the forward simulations, not rebuilding the state per target.
"""

from __future__ import annotations

import heapq

import numpy as np
import pandas as pd

from pyss_adapter.core.easy import EasyScheduler, head_reservation
from pyss_adapter.core.engine import Engine, JobState
from pyss_adapter.core.jobs import SimJobs


def simulated_waits(
    jobs: pd.DataFrame,
    targets: np.ndarray,
    machine_procs: int,
    actual_starts: np.ndarray | None = None,
) -> np.ndarray:
    """Predicted wait (seconds) of each target row: simulated EASY start - submit.

    Parameters
    ----------
    jobs : DataFrame
        ``read_swf(...).jobs`` (submit_time, wait_time, run_time, allocated_procs,
        requested_procs, requested_time), sorted by submit time.
    targets : ndarray of int, shape (m,)
        Row positions of the jobs to predict.
    machine_procs : int
    actual_starts : ndarray, shape (n,), optional
        Real start times (submit + wait from the log when omitted).

    Returns
    -------
    ndarray of float64, shape (m,), in the order of ``targets``.
    """
    submit = jobs["submit_time"].to_numpy(dtype=np.float64)
    if len(submit) > 1 and (np.diff(submit) < 0).any():
        raise ValueError("jobs must be sorted by submit_time (as read_swf returns them)")
    starts = (
        submit + np.maximum(jobs["wait_time"].to_numpy(dtype=np.float64), 0.0)
        if actual_starts is None
        else np.asarray(actual_starts, dtype=np.float64)
    )
    ends = starts + np.maximum(jobs["run_time"].to_numpy(dtype=np.float64), 0.0)
    estimate = _estimates(jobs)
    procs = _procs(jobs, machine_procs)
    targets = np.asarray(targets, dtype=np.int64)
    out = np.empty(len(targets), dtype=np.float64)
    sweep = _Sweep(submit, starts, ends)
    for k in np.argsort(submit[targets], kind="stable"):
        i = int(targets[k])
        queued, running = sweep.state_at(i)
        out[k] = forward_easy(
            submit[i],
            [(starts[j] + estimate[j], procs[j]) for j in running],
            [(procs[j], estimate[j]) for j in queued],
            queued.index(i),
            machine_procs,
        )
    return out


def _estimates(jobs: pd.DataFrame) -> np.ndarray:
    req = jobs["requested_time"].to_numpy(dtype=np.float64)
    run = jobs["run_time"].to_numpy(dtype=np.float64)
    return np.maximum(np.where(req > 0, req, run), 1.0)


def _procs(jobs: pd.DataFrame, machine_procs: int) -> list[int]:
    alloc = jobs["allocated_procs"].to_numpy(dtype=np.int64)
    procs = np.where(alloc > 0, alloc, jobs["requested_procs"].to_numpy(dtype=np.int64))
    return np.clip(procs, 1, machine_procs).tolist()


class _Sweep:
    """Queued and running sets at successive submissions (rows in submit order)."""

    def __init__(self, submit: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        self.submit, self.starts, self.ends = submit.tolist(), starts.tolist(), ends.tolist()
        self.next_row = 0
        self.queued: dict[int, None] = {}  # insertion-ordered = arrival order
        self.running: set[int] = set()
        self.to_start: list[tuple[float, int]] = []
        self.to_end: list[tuple[float, int]] = []

    def state_at(self, i: int) -> tuple[list[int], list[int]]:
        t = self.submit[i]
        while self.next_row <= i or (
            self.next_row < len(self.submit) and self.submit[self.next_row] < t
        ):
            row = self.next_row
            self.queued[row] = None
            heapq.heappush(self.to_start, (self.starts[row], row))
            self.next_row += 1
        # A job starting exactly at t is still queued when t's submission is seen.
        while self.to_start and self.to_start[0][0] < t:
            _, row = heapq.heappop(self.to_start)
            self.queued.pop(row, None)
            self.running.add(row)
            heapq.heappush(self.to_end, (self.ends[row], row))
        while self.to_end and self.to_end[0][0] <= t:
            self.running.discard(heapq.heappop(self.to_end)[1])
        queued = [j for j in self.queued if j <= i]
        return queued, list(self.running)


class _Known(Exception):  # a signal, not an error
    """The target's start is known: the forward simulation has its answer."""


class _StopAtTarget:
    """Ends the forward simulation as soon as the target's start is known.

    At each termination (before its pass): the target has started in an earlier
    pass, or it is the blocked head: every job then ends exactly at its estimate and
    EASY's backfills never delay the head, so it starts at its shadow time
    (:func:`~pyss_adapter.core.easy.head_reservation`; nothing starts between passes).
    """

    def __init__(self, target: int) -> None:
        self.target = target

    def on_submit(self, engine: Engine, j: int, now: float) -> None:
        return None

    def on_finish(self, engine: Engine, j: int, now: float) -> None:
        target = self.target
        if engine.state[target] != JobState.QUEUED or engine.queue[0] == target:
            raise _Known


def _target_start(engine: Engine, target: int) -> float:
    if engine.state[target] != JobState.QUEUED:
        return engine.start_s[target]
    if engine.procs[target] <= engine.free:
        return engine.now
    return head_reservation(engine, target)[0]


def forward_jobs(
    now: float, running: list[tuple[float, int]], queue: list[tuple[int, float]], machine_procs: int
) -> SimJobs:
    """The running (expected end, processors) then queued (processors, estimate) jobs as
    ``Engine.from_state`` takes them, every job running for its estimate; a running job past
    its expected end is expected to end in a second."""
    left = [max(end, now + 1.0) - now for end, _ in running]
    est = np.array(left + [e for _, e in queue], dtype=np.float64)
    procs = np.array([p for _, p in running] + [p for p, _ in queue], dtype=np.int64)
    size = len(est)
    return SimJobs(
        job_id=np.arange(size), submit_s=np.full(size, now), runtime_s=est, estimate_s=est,
        n_procs=procs, user_id=np.zeros(size, np.int64), machine_procs=machine_procs,
        mode="forward",
    )  # fmt: skip


def forward_easy(
    now: float,
    running: list[tuple[float, int]],
    queue: list[tuple[int, float]],
    target: int,
    machine_procs: int,
) -> float:
    """The engine's EASY forward from ``now``, runtimes = estimates; return the target's wait.

    ``running`` holds (expected end, processors), ``queue`` (processors, estimate) in
    arrival order with the target at position ``target`` (the last: nothing behind
    it matters). A running job past its expected end is expected to end in a second.
    Public for the why-it-waits explanations (``predictor.core.why.forward``) and the
    ``sim`` wait method, which ask the same question of a live or trace snapshot.
    """
    if target == 0 and queue[0][0] <= machine_procs - sum(p for _, p in running):
        return 0.0  # alone in the queue and it fits: any scheduler starts it now
    jobs = forward_jobs(now, running, queue, machine_procs)
    target += len(running)
    engine = Engine.from_state(
        jobs, EasyScheduler(), now, len(running), policy=_StopAtTarget(target)
    )
    try:
        engine.run()
    except _Known:
        pass
    return _target_start(engine, target) - now
