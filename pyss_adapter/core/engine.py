"""The event-driven replay engine (spec: "Events and order").

One priority queue of ``(time, order, seq, job)``: submissions (order 0) come
before terminations (order 1) at the same time; ``seq`` is a counter so ties
resolve the same way every run. Submissions are known up front and already
sorted, so they are kept in the (sorted) job arrays and merged with the heap of
terminations under the same key: the same order as pushing them in the heap,
without paying for it. PySS's start events only create the termination event, so
a start happens inside the scheduling pass that decides it; its ``seq`` is taken
at that moment, which is the order PySS gives the terminations.

The "busy until its estimated end" rule: PySS's CPU snapshot frees a job's
processors at ``start + estimate``. When the job really ends at that instant its
termination at ``t`` is handled after the submissions at ``t``, yet the passes
made for those submissions already see the processors free. ``_release_at``
holds those processors and gives them back as the clock reaches ``t``.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from heapq import heappop, heappush
from typing import Protocol

import numpy as np

from pyss_adapter.core.estimates import EstimateSource, RequestedEstimates
from pyss_adapter.core.jobs import SimJobs

SUBMIT, TERMINATE = 0, 1
_PROGRESS_MASK = (1 << 13) - 1


class JobState(IntEnum):
    """Life of a job: each state may only follow the previous one."""

    PENDING = 0  # not submitted yet
    QUEUED = 1
    RUNNING = 2
    DONE = 3


_PENDING, _QUEUED, _RUNNING, _DONE = (int(s) for s in JobState)


class IllegalTransition(RuntimeError):
    """A job was moved to a state that cannot follow its current one."""

    def __init__(self, job: int, current: int, target: JobState) -> None:
        super().__init__(
            f"job index {job}: illegal transition {JobState(current).name} -> {target.name}"
        )


class Scheduler(Protocol):
    """``schedule`` is a full pass. A scheduler may also offer ``schedule_new(engine, j)``:
    the pass for submission ``j`` when no queued job could start before it (nothing
    freed, no job past its estimate); the engine then calls it instead."""

    name: str

    def schedule(self, engine: Engine) -> None: ...


@dataclass
class ReplayResult:
    """Per-job outcome of a replay, in the order of :class:`SimJobs` (by submit time).

    ``reservation_s`` is the first reservation (shadow time) given to a job while
    it was the blocked head of the queue (NaN if it never was; EASY only).
    """

    jobs: SimJobs
    start_s: np.ndarray
    end_s: np.ndarray
    estimate_s: np.ndarray
    finish_order: np.ndarray
    reservation_s: np.ndarray
    scheduler: str
    estimates: str
    meta: dict = field(default_factory=dict)

    @property
    def wait_s(self) -> np.ndarray:
        return self.start_s - self.jobs.submit_s


class Engine:
    """Replay ``jobs`` on ``jobs.machine_procs`` processors with ``scheduler``.

    Parameters
    ----------
    jobs : SimJobs
    scheduler : object with ``name`` and ``schedule(engine)``
    estimates : EstimateSource, optional
        Runtime estimates used for reservations (default: the requested times).
    submit_guard : bool
        Some PySS versions run no pass on a submission whose job does not fit in
        the free processors. Off by default (the spec: every submission triggers a
        pass); on the four shared traces in ``pyss`` mode both give the same
        schedule (tests/realtrace/test_sim_real.py).
    progress : callable(fraction), optional
    """

    def __init__(
        self,
        jobs: SimJobs,
        scheduler: Scheduler,
        estimates: EstimateSource | None = None,
        *,
        submit_guard: bool = False,
        progress: Callable[[float], None] | None = None,
    ) -> None:
        self.jobs = jobs
        self.scheduler = scheduler
        self.estimates = estimates or RequestedEstimates()
        self.submit_guard = submit_guard
        self.progress = progress
        self._reset()

    def _reset(self) -> None:
        jobs = self.jobs
        if len(jobs) and int(jobs.n_procs.max()) > jobs.machine_procs:
            raise ValueError(
                f"a job needs {int(jobs.n_procs.max())} processors, the machine has "
                f"{jobs.machine_procs}: it would block the queue forever"
            )
        n = len(jobs)
        self._fresh = True
        self.n_total = jobs.machine_procs
        self.procs: list[int] = jobs.n_procs.tolist()
        self.runtime: list[float] = jobs.runtime_s.tolist()
        self.requested: list[float] = jobs.estimate_s.tolist()
        self.est: list[float] = self.estimates.initial(jobs).tolist()
        self.state = bytearray(n)
        self.released = bytearray(n)
        self.start_s: list[float] = [np.nan] * n
        self.reservation: list[float] = [np.nan] * n
        self.key_of: list[tuple[float, int, int]] = [(0.0, 0, 0)] * n
        self.finished: list[int] = []
        self.queue: list[int] = []
        self.queued_procs: list[int] = []  # processors of the queued jobs, sorted
        self.running: list[tuple[float, int, int]] = []  # (expected end, seq, job), sorted
        self.free = self.n_total
        self.now = -np.inf
        self._heap: list[tuple[float, int, int, int]] = []
        self._seq = 0
        self._release_at: dict[float, int] = {}

    def start(self, j: int) -> None:
        """Start queued job ``j`` now: take its processors, plan its termination."""
        if self.state[j] != _QUEUED:
            raise IllegalTransition(j, self.state[j], JobState.RUNNING)
        self.state[j] = _RUNNING
        now = self.now
        self.start_s[j] = now
        p = self.procs[j]
        self.free -= p
        queued_procs = self.queued_procs
        del queued_procs[bisect_left(queued_procs, p)]
        self._seq = seq = self._seq + 1
        end = now + self.runtime[j]
        expected = now + self.est[j]
        heappush(self._heap, (end, TERMINATE, seq, j))
        self.key_of[j] = entry = (expected, seq, j)
        insort(self.running, entry)
        if end == expected:
            self._release_at[end] = self._release_at.get(end, 0) + p
            self.released[j] = 1

    def expected_releases(self) -> list[tuple[float, int]]:
        """``(expected end, processors)`` of the running jobs as a scheduler sees them now.

        Sorted. Jobs whose processors are already back (ending now at their estimate)
        are left out. A job past its estimate is expected at its requested end
        (Tsafrir's EASY++ rule) or, past that too, in one second: never "now", which
        would hand its busy processors to a queued job.
        """
        now, procs = self.now, self.procs
        out = []
        for expected, _, j in self.running:
            if expected > now:
                out.append((expected, procs[j]))
            elif not self.released[j]:
                out.append((max(self.start_s[j] + self.requested[j], now + 1.0), procs[j]))
        out.sort()
        return out

    def run(self) -> ReplayResult:
        """Process every event; return the per-job result (a second run starts afresh)."""
        if not self._fresh:
            self._reset()
        self._fresh = False
        submit = self.jobs.submit_s.tolist()
        n = len(submit)
        heap, state, procs, queue = self._heap, self.state, self.procs, self.queue
        running, released, key_of = self.running, self.released, self.key_of
        finished, release_at, queued_procs = self.finished, self._release_at, self.queued_procs
        schedule = self.scheduler.schedule
        schedule_new = getattr(self.scheduler, "schedule_new", None)
        dynamic, guard, progress = self.estimates.dynamic, self.submit_guard, self.progress
        # settled: the last pass checked every queued job and nothing was freed since,
        # so a submission only has to look at the new job (see Scheduler.schedule_new).
        settled = False
        now = self.now
        pending, queued, running_state, done = _PENDING, _QUEUED, _RUNNING, _DONE
        i = 0
        while i < n or heap:
            if i < n and (not heap or submit[i] <= heap[0][0]):
                t, j = submit[i], i
                i += 1
                if t != now:
                    self.now = now = t
                    if t in release_at:
                        self.free += release_at.pop(t)
                        settled = False
                if state[j] != pending:
                    raise IllegalTransition(j, state[j], JobState.QUEUED)
                state[j] = queued
                if dynamic:
                    self.est[j] = self.estimates.at_submit(j, t)
                queue.append(j)
                insort(queued_procs, procs[j])
                if guard and procs[j] > self.free:
                    continue
                if settled and schedule_new and (not running or running[0][0] > t):
                    schedule_new(self, j)
                else:
                    schedule(self)
                    settled = True
                if progress is not None and not i & _PROGRESS_MASK:
                    progress(i / n)
                continue
            t, _, _, j = heappop(heap)
            if t != now:
                self.now = now = t
                if t in release_at:
                    self.free += release_at.pop(t)
            if state[j] != running_state:
                raise IllegalTransition(j, state[j], JobState.DONE)
            state[j] = done
            finished.append(j)
            del running[bisect_left(running, key_of[j])]
            if not released[j]:
                self.free += procs[j]
            if dynamic:
                self.estimates.at_finish(j, t, self.runtime[j])
            schedule(self)
            settled = True
        return self._result()

    def _result(self) -> ReplayResult:
        start = np.asarray(self.start_s, dtype=np.float64)
        if np.isnan(start).any():
            raise RuntimeError("some jobs never started: the engine stalled")
        return ReplayResult(
            jobs=self.jobs,
            start_s=start,
            end_s=start + self.jobs.runtime_s,
            estimate_s=np.asarray(self.est, dtype=np.float64),
            finish_order=np.asarray(self.finished, dtype=np.int64),
            reservation_s=np.asarray(self.reservation, dtype=np.float64),
            scheduler=self.scheduler.name,
            estimates=self.estimates.name,
        )
