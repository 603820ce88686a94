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

A placement (``core/placement``) puts each started job on nodes and frees them at
its end (or when its processors come back early); it only observes, except CASH with
credits, which moves ends through :meth:`Engine.set_end`. Without one the loop pays
one ``is None`` test per start and finish.

A :class:`~pyss_adapter.core.policy.SubmitPolicy` may see every arrival first and
resize or hold it (``core/policy.py``); held jobs wait in a second heap and enter
the queue at their release time. With no policy the loop does what it always did.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable
from enum import IntEnum
from heapq import heappop, heappush
from typing import Any, Protocol

import numpy as np

from pyss_adapter.core.estimates import EstimateSource, RequestedEstimates
from pyss_adapter.core.jobs import SimJobs
from pyss_adapter.core.policy import SubmitDecision, SubmitPolicy, check_decision
from pyss_adapter.core.result import ReplayResult

__all__ = ["Engine", "IllegalTransition", "JobState", "ReplayResult", "Scheduler"]

SUBMIT, TERMINATE, WAKE = 0, 1, 2  # WAKE: a pass asked for by a scheduler (``wake_at``)
_PROGRESS_MASK = (1 << 10) - 1


class JobState(IntEnum):
    """Life of a job: each state may only follow the previous one."""

    PENDING = 0  # not submitted yet
    QUEUED = 1
    RUNNING = 2
    DONE = 3
    HELD = 4  # postponed by the submit policy: PENDING -> HELD -> QUEUED


_PENDING, _QUEUED, _RUNNING, _DONE, _HELD = (int(s) for s in JobState)


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
    policy : SubmitPolicy, optional
        Sees every arrival (``on_submit``) and may resize or postpone it;
        ``on_start``/``on_finish`` are called when the policy defines them.
    placement : Placement, optional
        Bound already (``placement.bind``); hears every start, finish and clock move.
    """

    def __init__(
        self,
        jobs: SimJobs,
        scheduler: Scheduler,
        estimates: EstimateSource | None = None,
        *,
        submit_guard: bool = False,
        progress: Callable[[float], None] | None = None,
        policy: SubmitPolicy | None = None,
        placement: Any = None,
    ) -> None:
        self.jobs = jobs
        self.policy = policy
        self.placement = placement
        self._place = getattr(placement, "on_start", None)
        self._unplace = getattr(placement, "on_finish", None)
        self._advance = getattr(placement, "advance", None)
        self._moves_ends = bool(getattr(placement, "changes_runtime", False))
        # Without a policy the hot path pays one ``is None`` test per start.
        self._on_start = getattr(policy, "on_start", None)
        self._on_finish = getattr(policy, "on_finish", None)
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
        self._resume = False
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
        self.finished: list[int] = []  # termination order
        self.release_s: list[float] = jobs.submit_s.tolist()  # queue entry (a hold moves it)
        self.decisions: dict[int, SubmitDecision] = {}
        self.arrivals: list[int] = []  # queue entry order (kept when there is a policy)
        self.snapshots: Any = None  # the snapshot builder's cache (core/snapshot.py)
        self._held: list[tuple[float, int]] = []  # (release time, job)
        self._ask_again: set[int] = set()
        self.queue: list[int] = []
        self.queued_procs: list[int] = []  # processors of the queued jobs, sorted
        self.running: list[tuple[float, int, int]] = []  # (expected end, seq, job), sorted
        self.free = self.n_total
        self.now = -np.inf
        self._heap: list[tuple[float, int, int, int]] = []
        self._seq = 0
        self._release_at: dict[float, int] = {}
        self._release_jobs: dict[float, list[int]] = {}  # with a placement only
        self._end_seq: list[int] = [0] * n if self._moves_ends else []

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
            if self._place is not None:
                self._release_jobs.setdefault(end, []).append(j)
        if self._place is not None:
            if self._moves_ends:
                self._end_seq[j] = seq
            self._place(self, j, now)
        if self._on_start is not None:
            self._on_start(self, j, now)

    def set_end(self, j: int, t: float) -> None:
        """Move running job ``j``'s end to ``t`` (a placement whose nodes slow jobs down)."""
        if not self._moves_ends:
            raise RuntimeError("set_end needs a placement that changes runtimes")
        if self.state[j] != _RUNNING:
            raise IllegalTransition(j, self.state[j], JobState.DONE)
        start, p = self.start_s[j], self.procs[j]
        old = start + self.runtime[j]
        if self.released[j] and old > self.now:
            left = self._release_at[old] - p
            if left:
                self._release_at[old] = left
            else:
                del self._release_at[old]
            self._release_jobs[old].remove(j)
            self.released[j] = 0
        self.runtime[j] = t - start
        self._seq += 1
        self._end_seq[j] = self._seq
        heappush(self._heap, (t, TERMINATE, self._seq, j))
        if t == start + self.est[j] and t > self.now and not self.released[j]:
            self._release_at[t] = self._release_at.get(t, 0) + p
            self._release_jobs.setdefault(t, []).append(j)
            self.released[j] = 1

    def _released_now(self, t: float) -> None:
        """Processors back at ``t``: the placement frees those jobs' nodes too."""
        self.free += self._release_at.pop(t)
        if self._unplace is not None:
            for j in self._release_jobs.pop(t, ()):
                self._unplace(self, j, t)

    def wake_at(self, t: float) -> None:
        """Make a pass at ``t`` (> now), after the submissions and terminations of ``t``.

        For schedulers that start jobs at times no event marks (``core/recorded.py``).
        """
        if not t > self.now:
            raise ValueError(f"wake_at({t}) is not after now ({self.now})")
        self._seq += 1
        heappush(self._heap, (t, WAKE, self._seq, -1))

    @property
    def machine_procs(self) -> int:
        return self.n_total

    def running_jobs(self) -> list[tuple[int, float]]:
        """``(job, start_s)`` of the running jobs, in order of expected end."""
        start = self.start_s
        return [(j, start[j]) for _, _, j in self.running]

    def held_jobs(self) -> list[tuple[float, int]]:
        """``(release_s, job)`` of the jobs held by the policy, in release order."""
        return sorted(self._held)

    def job_state(self, j: int) -> JobState:
        return JobState(self.state[j])

    def expected_releases(self) -> list[tuple[float, int]]:
        """``(expected end, processors)`` of the running jobs as a scheduler sees them now.

        Sorted. Jobs whose processors are already back (ending now at their estimate)
        are left out; those past their estimate are re-timed (:meth:`overdue_releases`).
        """
        first, late = self.overdue_releases()
        procs = self.procs
        return sorted(late + [(expected, procs[j]) for expected, _, j in self.running[first:]])

    def overdue_releases(self) -> tuple[int, list[tuple[float, int]]]:
        """``(k, releases)``: the first ``k`` running jobs are at or past their expected end;
        ``releases`` (sorted) says when those whose processors are not back yet are expected.
        A job past its estimate is expected at its requested end (Tsafrir's EASY++ rule) or,
        past that too, in one second: never "now", which would hand its busy processors to a
        queued job."""
        running, now, procs = self.running, self.now, self.procs
        released, start, requested = self.released, self.start_s, self.requested
        first, late = 0, []
        while first < len(running) and running[first][0] <= now:
            j = running[first][2]
            if not released[j]:
                late.append((max(start[j] + requested[j], now + 1.0), procs[j]))
            first += 1
        late.sort()
        return first, late

    @classmethod
    def from_state(
        cls, jobs: SimJobs, scheduler: Scheduler, now: float, n_running: int, **kwargs: Any
    ) -> Engine:
        """An engine in the middle of a replay, to run forward with no further arrivals.

        At ``now`` the first ``n_running`` jobs are running (started now, for their
        ``runtime_s``: pass the time they have left; a policy does not hear of these
        starts) and the others are queued in their order; :meth:`run` then makes one
        pass and handles the terminations.
        ``squeue --start`` estimates use it (``core/start_estimate.py``).
        """
        if kwargs.get("placement") is not None:
            raise ValueError("a start estimate never places jobs: no placement with from_state")
        engine = cls(jobs, scheduler, **kwargs)
        engine.now = now = float(now)
        n, procs = len(jobs), engine.procs
        engine.state[:] = bytes([_RUNNING]) * n_running + bytes([_QUEUED]) * (n - n_running)
        engine.queue.extend(range(n_running, n))
        engine.queued_procs.extend(sorted(procs[n_running:]))
        # The running jobs in bulk, as ``start`` would leave them (seq = start order);
        # whatever the free processors: the log says they run.
        ends = [now + r for r in engine.runtime[:n_running]]
        expected = [now + e for e in engine.est[:n_running]]
        seqs = range(1, n_running + 1)
        engine.start_s[:n_running] = [now] * n_running
        engine.key_of[:n_running] = keys = list(zip(expected, seqs, range(n_running), strict=True))
        engine.running.extend(sorted(keys))
        engine._heap.extend(
            sorted(zip(ends, [TERMINATE] * n_running, seqs, range(n_running), strict=True))
        )
        engine._seq = n_running
        engine.free -= sum(procs[:n_running])
        for j in range(n_running):
            if ends[j] == expected[j]:
                engine._release_at[ends[j]] = engine._release_at.get(ends[j], 0) + procs[j]
                engine.released[j] = 1
        engine._resume = True
        return engine

    def run(self) -> ReplayResult:
        """Process every event; return the per-job result (a second run starts afresh)."""
        resume = self._resume and self._fresh
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
        held, on_finish = self._held, self._on_finish
        unplace, advance, end_seq = self._unplace, self._advance, self._end_seq
        has_policy = self.policy is not None
        on_submit: Any = self.policy.on_submit if self.policy is not None else None
        # settled: the last pass checked every queued job and nothing was freed since,
        # so a submission only has to look at the new job (see Scheduler.schedule_new).
        settled = False
        now = self.now
        pending, queued, running_state, done = _PENDING, _QUEUED, _RUNNING, _DONE
        i = 0
        if resume:  # from_state: the queue is there, no submission is left to come
            i = n
            schedule(self)
        while i < n or heap or held:
            # A released job enters before the log's arrivals and terminations at its time.
            if (
                held
                and (i == n or held[0][0] <= submit[i])
                and (not heap or held[0][0] <= heap[0][0])
            ):
                t, j = heappop(held)
                if state[j] != _HELD:
                    raise IllegalTransition(j, state[j], JobState.QUEUED)
                ask = j in self._ask_again
            elif i < n and (not heap or submit[i] <= heap[0][0]):
                t, j = submit[i], i
                i += 1
                if state[j] != pending:
                    raise IllegalTransition(j, state[j], JobState.QUEUED)
                ask = has_policy
            else:
                t, _, seq, j = heappop(heap)
                if end_seq and j >= 0 and seq != end_seq[j]:
                    continue  # an end the placement has moved since
                if t != now:
                    if advance is not None:
                        advance(self, t)
                    self.now = now = t
                    if t in release_at:
                        self._released_now(t)
                if j < 0:  # a wake-up: only a pass
                    schedule(self)
                    settled = True
                    continue
                if state[j] != running_state:
                    raise IllegalTransition(j, state[j], JobState.DONE)
                state[j] = done
                finished.append(j)
                del running[bisect_left(running, key_of[j])]
                if not released[j]:
                    self.free += procs[j]
                    if unplace is not None:
                        unplace(self, j, t)
                if dynamic:
                    self.estimates.at_finish(j, t, self.runtime[j])
                if on_finish is not None:
                    on_finish(self, j, t)
                schedule(self)
                settled = True
                continue
            if t != now:
                if advance is not None:
                    advance(self, t)
                self.now = now = t
                if t in release_at:
                    self._released_now(t)
                    settled = False
            if ask and self._decide(j, on_submit(self, j, t), t):
                continue
            state[j] = queued
            if has_policy:
                self.arrivals.append(j)
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
        return self._result()

    def _decide(self, j: int, decision: SubmitDecision | None, now: float) -> bool:
        """Apply the policy's decision for arrival ``j``; True if the job is now held."""
        self._ask_again.discard(j)
        if decision is None:
            return False
        check_decision(self, j, decision, now)
        self.decisions[j] = decision
        if decision.procs is not None:
            self.procs[j] = int(decision.procs)
        if decision.runtime_s is not None:
            self.runtime[j] = float(decision.runtime_s)
        if decision.estimate_s is not None:
            self.requested[j] = float(decision.estimate_s)
            revised = self.estimates.revise(j, float(decision.estimate_s))
            if revised is not None:
                self.est[j] = revised
        if decision.release_at is None or decision.release_at == now:
            return False
        self.state[j] = _HELD
        self.release_s[j] = float(decision.release_at)
        heappush(self._held, (float(decision.release_at), j))
        if decision.ask_again:
            self._ask_again.add(j)
        return True

    def _result(self) -> ReplayResult:
        start = np.asarray(self.start_s, dtype=np.float64)
        if np.isnan(start).any():
            raise RuntimeError("some jobs never started: the engine stalled")
        jobs = self.jobs
        # Without a policy the jobs ran as requested: the input arrays are the truth.
        as_run: dict[str, Any] = {}
        if self.policy is not None or self._moves_ends:
            as_run = {
                "n_procs": np.asarray(self.procs, dtype=jobs.n_procs.dtype),
                "runtime_s": np.asarray(self.runtime, dtype=np.float64),
                "requested_s": np.asarray(self.requested, dtype=np.float64),
                "release_s": np.asarray(self.release_s, dtype=np.float64),
            }
        runtime = as_run.get("runtime_s", jobs.runtime_s)
        return ReplayResult(
            jobs=jobs,
            start_s=start,
            end_s=start + runtime,
            estimate_s=np.asarray(self.est, dtype=np.float64),
            finish_order=np.asarray(self.finished, dtype=np.int64),
            reservation_s=np.asarray(self.reservation, dtype=np.float64),
            scheduler=self.scheduler.name,
            estimates=self.estimates.name,
            decisions=dict(self.decisions),
            placement=self.placement.result() if self.placement is not None else {},
            **as_run,
        )
