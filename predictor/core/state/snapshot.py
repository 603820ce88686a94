"""The system state at one instant: the waiting and running jobs, and what is known.

"End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs", section
"System state": at a job's arrival the state is the set of waiting jobs W and running jobs R
(with their requests, how long they have waited or run) and the finished history.

Two times are kept apart:

- ``known_at_s`` is the last instant whose information the snapshot may contain: waits of jobs
  that had started by then, runtimes of jobs that had ended by then. Nothing later.
- a request's ``submit_s`` is when it arrives; it may be later than ``known_at_s`` (a delayed
  submission asks about the future from what is known now). A method must never read past
  ``known_at_s``.

Snapshots are built from a stored log at time t (:func:`from_log`), from the simulator's queue
and running sets during a replay (``predictor.core.state.from_engine``), or from a site's live queue
(:func:`from_live`). The three are tested against each other on the same instant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.sweep import job_arrays


@dataclass(frozen=True)
class ActiveJobs:
    """Jobs in the queue or running at the snapshot's instant (columns, row k = job k).

    requests : their requests; waiting jobs are in arrival order (submit time, then log row).
    start_s : start time, +inf for a job still waiting.
    used_procs : processors a running job holds (SWF field 5; the request where unknown).
    """

    requests: RequestBatch
    start_s: np.ndarray
    used_procs: np.ndarray

    def __len__(self) -> int:
        return len(self.requests)

    def take(self, keep: np.ndarray) -> ActiveJobs:
        """The jobs at ``keep`` (positions or a boolean mask)."""
        return ActiveJobs(self.requests.take(keep), self.start_s[keep], self.used_procs[keep])

    def elapsed_s(self, at_s: float) -> np.ndarray:
        """How long each job has run at ``at_s`` (0 while waiting)."""
        return np.where(np.isfinite(self.start_s), np.maximum(at_s - self.start_s, 0.0), 0.0)


class _LazyFrame:
    """A dataclass field holding a DataFrame or a function making it on first read.

    ``from_log`` gives a function: censoring the history copies every arrived row, and the
    predictors read history from their fitted log, so an API answer never pays for it.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> pd.DataFrame:
        if obj is None:
            raise AttributeError(self.slot)  # no default: the field stays required
        value = obj.__dict__[self.slot]
        if callable(value):
            value = value()
            object.__setattr__(obj, self.slot, value)
        return value

    def __set__(self, obj: Any, value: pd.DataFrame | Callable[[], pd.DataFrame]) -> None:
        obj.__dict__[self.slot] = value


@dataclass(frozen=True)
class Snapshot:
    """The system at ``time_s``, knowing what was known at ``known_at_s`` (<= time_s).

    waiting, running : the jobs in the queue and running at ``time_s``.
    history : jobs submitted by ``known_at_s`` with the SWF columns
              (``traces.core.swf.SWF_FIELDS``); a job's wait is there only if it had started
              by ``known_at_s``, its runtime only if it had ended by then (otherwise -1).
    machine_procs : processors of the machine (or the site's partition).
    log_rows : for a snapshot of a stored log, how many of its rows have arrived (row order
               breaks ties between jobs submitted in the same second); None otherwise.
    """

    time_s: float
    known_at_s: float
    waiting: ActiveJobs
    running: ActiveJobs
    history: pd.DataFrame = _LazyFrame()
    machine_procs: int  # type: ignore[misc]  # history has no default (see _LazyFrame)
    log_rows: int | None = None

    @property
    def free_procs(self) -> int:
        return int(self.machine_procs - self.running.used_procs.sum())

    def arrived_rows(self, submit_s: np.ndarray) -> int:
        """Rows of a log (sorted ``submit_s``) that had arrived by ``known_at_s``.

        A fitted method reads history rows below this bound only (and among them, facts known
        at ``known_at_s``). For a snapshot of that same log it is ``log_rows``.
        """
        if self.log_rows is not None:
            return int(self.log_rows)
        return int(np.searchsorted(submit_s, self.known_at_s, side="right"))


def censored_history(jobs: pd.DataFrame, known_at_s: float, n_rows: int) -> pd.DataFrame:
    """The first ``n_rows`` jobs as known at ``known_at_s``: later waits and runtimes are -1."""
    hist = jobs.iloc[:n_rows].copy()
    submit = hist["submit_time"].to_numpy(np.float64)
    wait = hist["wait_time"].to_numpy(np.float64)
    run = hist["run_time"].to_numpy(np.float64)
    start = submit + np.maximum(wait, 0.0)
    started = (wait >= 0) & (start <= known_at_s)
    ended = started & (run >= 0) & (start + np.maximum(run, 0.0) <= known_at_s)
    hist["wait_time"] = np.where(started, wait, -1.0)
    hist["run_time"] = np.where(ended, run, -1.0)
    return hist.reset_index(drop=True)


@dataclass(frozen=True)
class LogColumns:
    """What :func:`from_log` reads from a log, extracted once (a fitted bundle keeps it)."""

    arrays: Any
    requests: RequestBatch
    used_procs: np.ndarray
    reach_max: np.ndarray  # running maximum over rows of when each leaves W and R (-inf: never in)

    @classmethod
    def of(cls, jobs: pd.DataFrame) -> LogColumns:
        requests = RequestBatch.from_jobs(jobs)
        alloc = jobs["allocated_procs"].to_numpy(np.int64)
        a = job_arrays(jobs)
        # A row is waiting or running at t only if t < its end (its start, for a job without
        # a runtime); so rows up to the last whose running maximum of ends is <= t are never
        # in W or R at t, and ``from_log`` scans from there instead of from row 0.
        reach = np.where(a.present, a.end, -np.inf)
        reach_max = np.maximum.accumulate(reach) if reach.size else reach
        return cls(a, requests, np.where(alloc > 0, alloc, requests.procs), reach_max)


def from_log(
    jobs: pd.DataFrame,
    time_s: float,
    known_at_s: float | None = None,
    *,
    machine_procs: int,
    rows: int | None = None,
    columns: LogColumns | None = None,
) -> Snapshot:
    """The state of a stored log at ``time_s`` (its W and R) and its history known at
    ``known_at_s`` (default ``time_s``).

    Parameters
    ----------
    jobs : SWF jobs sorted by submit time (``read_swf`` does this).
    rows : how many rows have arrived; default every row submitted by ``time_s``. Pass ``i``
        for the state job ``i`` sees at its own arrival (jobs of the same second on later rows
        have not arrived yet: the sweep's leakage rule).

    columns : the log's :class:`LogColumns` when already extracted (same snapshot, faster).

    W and R follow the sweep's rules (``predictor.core.state.sweep``): a job with an unknown
    wait is in neither; a job that starts exactly at ``time_s`` runs; one that ends then is gone.
    The censored history is made on first read.
    """
    known_at_s = float(time_s if known_at_s is None else known_at_s)
    if known_at_s > time_s:
        raise ValueError(f"known_at_s {known_at_s} is after time_s {time_s}")
    columns = LogColumns.of(jobs) if columns is None else columns
    a, requests, used = columns.arrays, columns.requests, columns.used_procs
    n = int(np.searchsorted(a.submit, time_s, side="right") if rows is None else rows)
    lo = min(int(np.searchsorted(columns.reach_max, time_s, side="right")), n)
    head = slice(lo, n)  # rows before ``lo`` have all left (``LogColumns.reach_max``)
    waiting = lo + np.flatnonzero(a.present[head] & (a.start[head] > time_s))
    running = lo + np.flatnonzero(a.runs[head] & (a.start[head] <= time_s) & (a.end[head] > time_s))
    n_known = min(n, int(np.searchsorted(a.submit, known_at_s, side="right")))
    return Snapshot(
        time_s=float(time_s),
        known_at_s=known_at_s,
        waiting=ActiveJobs(requests.take(waiting), np.full(waiting.size, np.inf), used[waiting]),
        running=ActiveJobs(requests.take(running), a.start[running], used[running]),
        history=lambda: censored_history(jobs, known_at_s, n_known),
        machine_procs=int(machine_procs),
        log_rows=n if known_at_s == time_s else n_known,
    )


@dataclass(frozen=True)
class LiveJob:
    """A job as a site's batch system reports it (``squeue``, ``qstat``).

    state : "waiting" or "running". A running job gives ``start_s`` or ``elapsed_s``;
    ``used_procs`` defaults to the request.
    """

    request: JobRequest
    state: str
    start_s: float | None = None
    elapsed_s: float | None = None
    used_procs: int | None = None


def _active(jobs: list[LiveJob], time_s: float, running: bool) -> ActiveJobs:
    requests = RequestBatch.of([j.request for j in jobs])
    used = np.array([j.used_procs or j.request.procs for j in jobs], np.int64)
    if not running:
        return ActiveJobs(requests, np.full(len(jobs), np.inf), used)
    starts = []
    for j in jobs:
        if j.start_s is None and j.elapsed_s is None:
            raise ValueError(f"running job {j.request.job_id} has neither start_s nor elapsed_s")
        starts.append(
            j.start_s if j.start_s is not None else time_s - float(cast(float, j.elapsed_s))
        )
    return ActiveJobs(requests, np.array(starts, np.float64), used)


def from_live(
    jobs: Sequence[LiveJob],
    time_s: float,
    history: pd.DataFrame | Callable[[], pd.DataFrame],
    *,
    machine_procs: int,
) -> Snapshot:
    """The state a site reports at ``time_s`` (now, so ``known_at_s = time_s``).

    ``history`` holds the site's finished jobs (SWF columns, sorted by submit time), or is a
    function giving them on first read. Waiting jobs are put in arrival order (submit time,
    then job id), as a log's rows are.
    """
    bad = [j.request.job_id for j in jobs if j.state not in ("waiting", "running")]
    if bad:
        raise ValueError(f"state must be 'waiting' or 'running' (jobs {bad[:5]})")
    waiting = sorted(
        (j for j in jobs if j.state == "waiting"),
        key=lambda j: (j.request.submit_s, j.request.job_id),
    )
    running = [j for j in jobs if j.state == "running"]
    return Snapshot(
        time_s=float(time_s),
        known_at_s=float(time_s),
        waiting=_active(waiting, time_s, running=False),
        running=_active(running, time_s, running=True),
        history=history,
        machine_procs=int(machine_procs),
    )
