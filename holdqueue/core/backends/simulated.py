"""A live virtual cluster: the project's EASY simulator replaying a trace against the clock.

The background load is a stored trace whose submit times are shifted so that its first job
arrives at the site's ``epoch_ts``, played ``speed`` times faster than the wall clock, and
repeated end to end (cycle ``k`` starts ``k x span`` simulated seconds later) so the queue never
runs dry. Jobs Queuecast submits join the same replay at their submit time.

Why a full replay per question is exact: EASY backfilling decides at each instant from the
jobs that have arrived and their *estimates*; the actual runtimes only decide when jobs end.
So the schedule up to "now" depends only on jobs submitted by now, and replaying every job
submitted so far, then reading who waits, runs or has finished at "now", is the same as a
simulator that had been running live all along. To bound the work, each replay starts empty
at the beginning of the previous cycle (at most two cycles of jobs; the first cycle boundary
crossed forgets load older than one full cycle, which has long finished on any real trace).

Durations: the simulator works in trace seconds; the site reports wall-clock timestamps,
``ts = epoch + t / speed``. A submitted job runs ``runtime_fraction`` of its time limit
(its script is not executed). A cancelled job that was still waiting leaves the replay; one
that was running ends at the cancellation.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Protocol

import numpy as np

from holdqueue.core.backends.base import (
    FINISHED,
    RUNNING,
    WAITING,
    Backend,
    BackendJob,
    JobSpec,
    SubmissionRejected,
)
from pyss_adapter.core.jobs import sim_jobs_from_arrays
from pyss_adapter.core.replay import replay_jobs


@dataclass(frozen=True)
class Background:
    """The trace replayed as background load (arrays of one length, sorted by submit)."""

    submit_s: np.ndarray
    runtime_s: np.ndarray
    estimate_s: np.ndarray
    procs: np.ndarray
    user: np.ndarray

    @cached_property
    def rel_s(self) -> np.ndarray:
        """Each arrival after the first's, seconds (worked out once per background)."""
        return self.submit_s - self.submit_s[0]

    @cached_property
    def span_s(self) -> float:
        """Length of one cycle: first to last arrival plus one mean gap."""
        rel = self.rel_s
        gap = float(rel[-1]) / max(len(rel) - 1, 1)
        return float(rel[-1]) + max(gap, 1.0)


def _by_cycle(values: list[np.ndarray], kept: list[np.ndarray]) -> np.ndarray:
    """Each cycle's values where ``kept`` (its arrivals by now), cycle after cycle: what
    tiling the background and masking it gave, without the tiled copies (a whole cycle is
    taken as it is)."""
    return np.concatenate(
        [v if k.all() else v[k] for v, k in zip(values, kept, strict=True)]
    )  # fmt: skip


@dataclass(frozen=True)
class SimSubmission:
    """A job Queuecast submitted to the virtual cluster (``runtime_s`` in wall seconds)."""

    backend_id: str
    tag: str
    name: str
    user: str
    procs: int
    time_limit_s: float
    runtime_s: float
    submit_ts: float
    cancel_ts: float | None = None


class SubmissionStore(Protocol):
    """Where the virtual cluster keeps the jobs submitted to it (the database, or memory)."""

    def add(self, submission: SimSubmission) -> SimSubmission: ...

    def since(self, ts: float) -> list[SimSubmission]: ...

    def cancel(self, backend_id: str, ts: float) -> None: ...


class MemoryStore:
    """A :class:`SubmissionStore` in a list (tests, one process)."""

    def __init__(self) -> None:
        self.jobs: list[SimSubmission] = []
        self._ids = itertools.count(1)

    def add(self, submission: SimSubmission) -> SimSubmission:
        stored = replace(submission, backend_id=f"q{next(self._ids)}")
        self.jobs.append(stored)
        return stored

    def since(self, ts: float) -> list[SimSubmission]:
        return [j for j in self.jobs if j.submit_ts >= ts]

    def cancel(self, backend_id: str, ts: float) -> None:
        self.jobs = [
            replace(j, cancel_ts=ts) if j.backend_id == backend_id and j.cancel_ts is None else j
            for j in self.jobs
        ]


SPEED = 1.0  # site seconds per wall second, unless the site's config says otherwise
RUNTIME_FRACTION = 0.5  # the share of its limit a submitted job runs, likewise


class SimulatedBackend(Backend):
    """The virtual cluster of a site (see the module docstring).

    Parameters
    ----------
    background : the trace's jobs; machine_procs : the machine's processors.
    epoch_ts : wall-clock time at which the trace's first job arrives.
    speed : trace seconds per wall second (> 0).
    store : where submitted jobs live; clock : the wall clock (tests inject one).
    """

    name = "simulated"

    def __init__(
        self,
        background: Background,
        machine_procs: int,
        epoch_ts: float,
        store: SubmissionStore,
        speed: float = SPEED,
        runtime_fraction: float = RUNTIME_FRACTION,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        if len(background.submit_s) == 0:
            raise ValueError("the background trace has no jobs")
        self.background = background
        self.machine_procs = int(machine_procs)
        self.epoch_ts = float(epoch_ts)
        self.store = store
        self.speed = float(speed)
        self.runtime_fraction = float(runtime_fraction)
        self.clock = clock

    def _sim(self, ts: float) -> float:
        return (ts - self.epoch_ts) * self.speed

    def _wall(self, t: np.ndarray | float) -> np.ndarray | float:
        return self.epoch_ts + np.asarray(t) / self.speed

    # --- the contract -------------------------------------------------------------------
    def submit(self, spec: JobSpec) -> str:
        if not 1 <= spec.procs <= self.machine_procs:
            raise SubmissionRejected(
                f"procs {spec.procs} outside 1..{self.machine_procs} (the virtual machine)"
            )
        sub = SimSubmission(
            backend_id="",
            tag=spec.tag,
            name=spec.name,
            user=spec.user,
            procs=int(spec.procs),
            time_limit_s=float(spec.time_limit_s),
            runtime_s=max(1.0, self.runtime_fraction * float(spec.time_limit_s)),
            submit_ts=self.clock(),
        )
        return self.store.add(sub).backend_id

    def cancel(self, backend_id: str) -> None:
        self.store.cancel(backend_id, self.clock())

    def active(self) -> list[BackendJob]:
        return [j for j in self.jobs_at(self.clock()) if j.state != FINISHED]

    def finished_since(self, since_ts: float) -> list[BackendJob]:
        jobs = self.jobs_at(self.clock())
        return [j for j in jobs if j.state == FINISHED and (j.end_ts or 0.0) >= since_ts]

    # --- the replay ---------------------------------------------------------------------
    def jobs_at(self, now_ts: float) -> list[BackendJob]:
        """Every job of the replay window as it stands at ``now_ts``."""
        t_now = self._sim(now_ts)
        if t_now < 0:
            return []
        bg = self.background
        span = bg.span_s
        first = max(int(t_now // span) - 1, 0)
        window_start = first * span
        rel = bg.rel_s
        cycles = [rel + k * span for k in range(first, int(t_now // span) + 1)]
        kept = [c <= t_now for c in cycles]
        mine = self.store.since(float(self._wall(window_start)))
        reps = len(cycles)
        arrays = {
            "submit": _by_cycle(cycles, kept),
            "runtime": _by_cycle([bg.runtime_s] * reps, kept),
            "estimate": _by_cycle([bg.estimate_s] * reps, kept),
            "procs": np.minimum(_by_cycle([bg.procs] * reps, kept), self.machine_procs),
        }
        # "t<cycle>-<row>" of the kept jobs only (naming every job of the window cost more
        # than the replay itself on a long trace: two cycles of 28k names per question)
        n = len(rel)
        ids = [f"t{first + p // n}-{p % n}" for p in np.flatnonzero(np.concatenate(kept)).tolist()]
        return self._replay(arrays, ids, mine, t_now)

    def _replay(self, bg, ids, mine, t_now) -> list[BackendJob]:
        mine = [m for m in mine if self._sim(m.submit_ts) <= t_now]
        m_sub = np.array([self._sim(m.submit_ts) for m in mine], dtype=float)
        m_run = np.array([m.runtime_s * self.speed for m in mine], dtype=float)
        m_est = np.array([m.time_limit_s * self.speed for m in mine], dtype=float)
        m_procs = np.array([m.procs for m in mine], dtype=np.int64)
        cancel = np.array(
            [np.inf if m.cancel_ts is None else self._sim(m.cancel_ts) for m in mine], dtype=float
        )
        drop = np.zeros(len(mine), dtype=bool)
        for _ in range(2):  # second pass applies the cancellations to the first pass's starts
            result = self._run(bg, m_sub[~drop], m_run[~drop], m_est[~drop], m_procs[~drop])
            start = np.full(len(mine), np.inf)
            start[~drop] = result[0][len(bg["submit"]) :]
            newly = (cancel < start) & ~drop
            truncated = np.where(start <= cancel, np.minimum(m_run, cancel - start), m_run)
            if not newly.any() and np.array_equal(truncated, m_run):
                break
            drop |= newly
            m_run = truncated
        starts, ends = result
        out = [
            self._job(
                ids[i],
                "",
                "",
                "",
                float(bg["procs"][i]),
                bg["estimate"][i],
                bg["submit"][i],
                starts[i],
                ends[i],
                t_now,
            )
            for i in range(len(ids))
        ]
        kept = [m for m, d in zip(mine, drop.tolist(), strict=True) if not d]
        n = len(ids)
        for k, m in enumerate(kept):
            out.append(self._mine(m, starts[n + k], ends[n + k], t_now, m.cancel_ts is not None))
        for m, d in zip(mine, drop.tolist(), strict=True):
            if d:  # cancelled before it started: it never ran
                out.append(self._mine(m, np.inf, self._sim(m.cancel_ts), t_now, True))
        return out

    def _mine(
        self, m: SimSubmission, start: float, end: float, t_now: float, cancelled: bool
    ) -> BackendJob:
        """One of our submissions as the batch system reports it (simulated clock)."""
        return self._job(
            m.backend_id,
            m.tag,
            m.name,
            m.user,
            m.procs,
            m.time_limit_s * self.speed,
            self._sim(m.submit_ts),
            start,
            end,
            t_now,
            cancelled=cancelled,
        )

    def _run(self, bg, sub, run, est, procs) -> tuple[np.ndarray, np.ndarray]:
        submit = np.concatenate([bg["submit"], sub])
        jobs = sim_jobs_from_arrays(
            submit_s=submit,
            runtime_s=np.concatenate([bg["runtime"], run]),
            estimate_s=np.maximum(np.concatenate([bg["estimate"], est]), 1.0),
            n_procs=np.concatenate([bg["procs"], procs]),
            machine_procs=self.machine_procs,
            job_id=np.arange(len(submit)),
        )
        result = replay_jobs(jobs, "easy", "requested")
        # SimJobs are sorted by submit (stable): map back to the input order by job_id.
        starts = np.empty(len(submit))
        ends = np.empty(len(submit))
        starts[jobs.job_id] = result.start_s
        ends[jobs.job_id] = result.end_s
        return starts, ends

    def _job(
        self,
        bid,
        tag,
        name,
        user,
        procs,
        limit,
        sub,
        start,
        end,
        t_now,
        cancelled: bool = False,
    ) -> BackendJob:
        if start > t_now and not (cancelled and end <= t_now):
            state, outcome = WAITING, "PENDING"
        elif end > t_now:
            state, outcome = RUNNING, "RUNNING"
        else:
            state, outcome = FINISHED, "CANCELLED" if cancelled else "COMPLETED"
        return BackendJob(
            backend_id=bid,
            tag=tag,
            name=name,
            user=user,
            procs=int(procs),
            time_limit_s=float(limit) / self.speed,
            state=state,
            outcome=outcome,
            submit_ts=float(self._wall(sub)),
            start_ts=float(self._wall(start)) if np.isfinite(start) and start <= t_now else None,
            end_ts=float(self._wall(end)) if state == FINISHED else None,
        )
