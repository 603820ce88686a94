"""The predictor's :class:`~predictor.core.state.snapshot.Snapshot` of a running replay.

"End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs",
sections "System state" and "Job molding": a decision at a job's arrival sees the
waiting and running jobs and the history the system knows *then*. Inside a replay
that is the simulated system: the simulated waits of jobs that have started, the
runtimes of jobs that have finished in the simulation; never the log's own waits
and nothing after ``now``.

The snapshot follows :func:`predictor.core.state.snapshot.from_log`'s rules, so the
two agree on a replay that reproduces the log (tests/core/test_snapshot_equivalence.py):

- ``waiting``: the engine's queue, in arrival order; ``running``: jobs started by
  ``now`` and ending after it, in arrival order; requests from the log's rows (user,
  group, queue, ...), with a policy's new size and requested time, submitted at
  their release (a held job is not submitted yet: it is in neither set);
- ``history``: every job submitted so far, in arrival order, with the log's SWF
  columns except ``submit_time`` (the release), ``wait_time`` (simulated start -
  release, -1 until started), ``run_time`` (the simulated runtime, -1 until ended)
  and, for a resized job, ``requested_procs``/``allocated_procs``/``requested_time``.

Cost: the builder (cached on the engine) catches up with what happened since the
previous call, O(new arrivals + finishes + running jobs), and keeps the history's
columns in arrival order, so a snapshot shares the fixed columns (views of rows
that never change again) and copies only the wait and runtime columns. What is
left is pandas' fixed cost of an 18-column frame: about 0.4 ms a snapshot (KTH,
a snapshot at each of 28,475 arrivals: 12 s CPU on top of a 0.17 s replay,
``/tmp``-free measure in docs/simulator.md). Asked twice at one instant, it
returns the same snapshot. It needs the
engine to have a policy (snapshots are asked for from ``on_submit``), which makes
the engine record arrivals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import ActiveJobs, Snapshot
from traces.core.swf import SWF_FIELDS

if TYPE_CHECKING:
    from pyss_adapter.core.engine import Engine
    from pyss_adapter.core.jobs import SimJobs

_CENSORED = ("wait_time", "run_time")


def snapshot_from_engine(engine: Engine, now: float, log: pd.DataFrame | None = None) -> Snapshot:
    """The state of ``engine`` at ``now`` (its current time), as the simulated system knows it.

    Parameters
    ----------
    engine : Engine, running with a policy (call this from ``on_submit`` and friends).
    now : float, must be ``engine.now``: a replay cannot look back or ahead.
    log : DataFrame, optional
        The SWF rows the engine's jobs came from (matched by ``job_id``), for the
        columns the simulator does not carry (group, queue, executable, memory, ...);
        without it those are -1. Give the same log at every call of one replay.
    """
    builder = engine.snapshots
    if builder is None or builder.engine is not engine:
        builder = engine.snapshots = EngineSnapshots(engine, log)
    return builder.snapshot(now)


class EngineSnapshots:
    """Incremental snapshots of one engine's replay (see the module docstring)."""

    def __init__(self, engine: Engine, log: pd.DataFrame | None = None) -> None:
        if engine.policy is None:
            raise ValueError("snapshots of a replay need an engine with a policy")
        self.engine = engine
        jobs = engine.jobs
        n = len(jobs)
        self._by_job = _job_columns(jobs, log)  # SWF columns, engine job order
        self._requests = _requests(self._by_job)  # request columns, engine job order
        self._hist = {f: np.empty(n, a.dtype) for f, a in self._by_job.items()}  # arrival order
        self._hist["wait_time"][:] = -1.0
        self._hist["run_time"][:] = -1.0
        self._slot = np.full(n, -1, dtype=np.int64)
        self._n_arrived = 0
        self._n_finished = 0
        self._last: tuple[tuple, Snapshot] | None = None

    def snapshot(self, now: float) -> Snapshot:
        engine = self.engine
        if now != engine.now:
            raise ValueError(f"a replay's snapshot is taken at its current time {engine.now}")
        # Nothing moves while one decision is made: a second call gets the same snapshot.
        key = (now, len(engine.arrivals), len(engine.finished), len(engine.queue))
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        self._catch_up(now)
        queue = np.asarray(engine.queue, dtype=np.int64)
        running = self._running(now)
        procs = engine.procs
        k = self._n_arrived
        hist = {f: (a[:k].copy() if f in _CENSORED else a[:k]) for f, a in self._hist.items()}
        snap = Snapshot(
            time_s=float(now),
            known_at_s=float(now),
            waiting=ActiveJobs(
                self._requests.take(queue),
                np.full(len(queue), np.inf),
                np.array([procs[j] for j in queue], dtype=np.int64),
            ),
            running=ActiveJobs(
                self._requests.take(running),
                np.array([engine.start_s[j] for j in running], dtype=np.float64),
                np.array([procs[j] for j in running], dtype=np.int64),
            ),
            history=pd.DataFrame(hist, copy=False),
            machine_procs=engine.machine_procs,
        )
        self._last = (key, snap)
        return snap

    def _catch_up(self, now: float) -> None:
        engine, hist, slot = self.engine, self._hist, self._slot
        arrivals = engine.arrivals
        for j in arrivals[self._n_arrived :]:
            self._arrive(j)
        finished = engine.finished
        release, start, runtime = engine.release_s, engine.start_s, engine.runtime
        for j in finished[self._n_finished :]:
            s = slot[j]
            hist["wait_time"][s] = start[j] - release[j]
            hist["run_time"][s] = runtime[j]
        self._n_finished = len(finished)
        for _, _, j in engine.running:
            s = slot[j]
            hist["wait_time"][s] = start[j] - release[j]
            if start[j] + runtime[j] <= now:  # ends now: its termination is not handled yet
                hist["run_time"][s] = runtime[j]

    def _arrive(self, j: int) -> None:
        """Job ``j`` entered the queue: apply the policy's changes, give it a history row."""
        engine, by_job, req = self.engine, self._by_job, self._requests
        release = engine.release_s[j]
        by_job["submit_time"][j] = req.submit_s[j] = release
        decision = engine.decisions.get(j)
        if decision is not None and decision.procs is not None:
            by_job["requested_procs"][j] = by_job["allocated_procs"][j] = engine.procs[j]
            req.procs[j] = engine.procs[j]
        if decision is not None and decision.estimate_s is not None:
            by_job["requested_time"][j] = req.req_time_s[j] = engine.requested[j]
        s = self._n_arrived
        self._slot[j] = s
        for name, column in self._hist.items():
            if name not in _CENSORED:
                column[s] = by_job[name][j]
        self._n_arrived = s + 1

    def _running(self, now: float) -> np.ndarray:
        """Running jobs that end after ``now``, in arrival order."""
        start, runtime, slot = self.engine.start_s, self.engine.runtime, self._slot
        alive = [j for _, _, j in self.engine.running if start[j] + runtime[j] > now]
        alive.sort(key=slot.__getitem__)
        return np.asarray(alive, dtype=np.int64)


def _job_columns(jobs: SimJobs, log: pd.DataFrame | None) -> dict[str, np.ndarray]:
    """Writable SWF columns in the engine's job order, from ``log`` or from the jobs."""
    n = len(jobs.job_id)
    if log is not None:
        pos = pd.Index(log["job_id"].to_numpy()).get_indexer(jobs.job_id)
        if (pos < 0).any():
            missing = jobs.job_id[pos < 0][:5].tolist()
            raise ValueError(f"jobs {missing} of the replay are not in the log")
        return {f: log[f].to_numpy()[pos].copy() for f in SWF_FIELDS}
    floats = {"submit_time", "wait_time", "run_time", "avg_cpu_time", "used_memory",
              "requested_time", "requested_memory", "think_time"}  # fmt: skip
    cols = {f: np.full(n, -1.0 if f in floats else -1, np.float64 if f in floats else np.int64)
            for f in SWF_FIELDS}  # fmt: skip
    cols["job_id"] = np.asarray(jobs.job_id, np.int64).copy()
    cols["user_id"] = np.asarray(jobs.user_id, np.int64).copy()
    cols["submit_time"] = np.asarray(jobs.submit_s, np.float64).copy()
    cols["requested_procs"] = np.asarray(jobs.n_procs, np.int64).copy()
    cols["allocated_procs"] = cols["requested_procs"].copy()
    cols["requested_time"] = np.asarray(jobs.estimate_s, np.float64).copy()
    return cols


def _requests(cols: dict[str, np.ndarray]) -> RequestBatch:
    """Request columns (writable copies) with :meth:`RequestBatch.from_jobs`'s rules."""
    batch = RequestBatch.from_jobs(pd.DataFrame(cols, copy=False))
    return RequestBatch(**{name: np.array(value) for name, value in vars(batch).items()})
