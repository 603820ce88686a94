"""A start-time estimate from simulation, what ``squeue --start`` gives (issue 5, item 6).

At a target job's submission ``t`` we know, from the log, the jobs running at ``t``
(with their real start times) and the jobs queued at ``t`` (submitted no later,
not started yet); runtimes are unknown, so every job is assumed to run for its
requested time (its run time when the request is missing). We simulate EASY
forward from that state, with no further arrivals, and the target's simulated
start minus ``t`` is its predicted wait.

The sets at ``t`` are kept by one sweep over the targets in time order (jobs
enter at their submission, move to running at their start, leave at their end),
so the cost is the forward simulations, not rebuilding the state per target.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort

import numpy as np
import pandas as pd


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
        out[k] = _forward_easy(
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


def _forward_easy(
    now: float,
    running: list[tuple[float, int]],
    queue: list[tuple[int, float]],
    target: int,
    machine_procs: int,
) -> float:
    """EASY forward from ``now`` with runtimes = estimates; return the target's wait.

    ``queue`` holds (processors, estimate) in arrival order; the target is its last
    entry, so nothing behind it matters. Every job ends exactly at its estimate,
    so all processors freed at a time are freed together, before the pass.
    """
    ends = sorted((max(end, now + 1.0), p) for end, p in running)
    state = _Forward(now, machine_procs - sum(p for _, p in ends), queue, ends)
    t = now
    while True:
        if state.easy_pass(t, target):
            return t - now
        if state.waiting[0] == target:
            # A blocked head starts exactly at its shadow when every job ends at
            # its estimate: backfilled jobs cannot delay it.
            return state.shadow(queue[target][0])[0] - now
        t = ends[0][0]
        while ends and ends[0][0] == t:
            state.free += ends.pop(0)[1]


class _Forward:
    def __init__(
        self, now: float, free: int, queue: list[tuple[int, float]], ends: list[tuple[float, int]]
    ) -> None:
        self.free, self.queue, self.ends = free, queue, ends
        self.waiting = list(range(len(queue)))
        self.sizes = sorted(p for p, _ in queue)  # processors of the waiting jobs

    def _start(self, j: int, t: float) -> None:
        p, est = self.queue[j]
        self.free -= p
        insort(self.ends, (t + est, p))
        del self.sizes[bisect_left(self.sizes, p)]

    def easy_pass(self, t: float, target: int) -> bool:
        """One EASY pass at ``t``; True once the target has started."""
        waiting, queue = self.waiting, self.queue
        while waiting and queue[waiting[0]][0] <= self.free:
            j = waiting.pop(0)
            self._start(j, t)
            if j == target:
                return True
        if len(waiting) < 2 or self.free < self.sizes[0]:
            return False
        shadow, extra = self.shadow(queue[waiting[0]][0])
        started = []
        for pos in range(1, len(waiting)):
            j = waiting[pos]
            p, est = queue[j]
            if p > self.free or (t + est > shadow and p > extra):
                continue
            if t + est > shadow:
                extra -= p
            self._start(j, t)
            if j == target:
                return True
            started.append(pos)
            if not self.sizes or self.free < self.sizes[0]:
                break
        for pos in reversed(started):
            del waiting[pos]
        return False

    def shadow(self, need: int) -> tuple[float, int]:
        avail, shadow = self.free, np.inf
        for end, p in self.ends:
            if end > shadow:
                break
            avail += p
            if shadow == np.inf and avail >= need:
                shadow = end
        return shadow, avail - need
