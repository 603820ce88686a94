"""The site's state at a future time ``t``: the snapshot advanced by EASY, no new arrivals.

The delay decision predicts a job's response as if it arrived at ``t`` (seed 002, Section
IV-B: ``t`` is a predicted completion of a running job). The seed only takes the jobs predicted
to have ended by ``t`` out of the state. On a live site that leaves the queue as it is now
beside a machine that has just emptied: a state that never occurs (the queued jobs would have
taken those processors), and for which a wait predictor answers almost nothing (a site's
13-hour wait now became a 3-minute one 99 s later). Here the snapshot is moved forward the way
the scheduler would move it: the running jobs end at their predicted ends, the queued jobs
start in EASY-backfilling order (the replay engine: ``pyss_adapter.core.engine.Engine
.from_state``) with their requested times as the scheduler's estimates and their predicted
runtimes as what they run, and at ``t`` the jobs that started and have not ended are running,
the rest still wait. Nothing new is known at ``t`` (``known_at_s`` and the history stay).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from predictor.core.runtime.rangeset import RangeSet
from predictor.core.runtime.remaining import LimitFractions, runtime_given_elapsed
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import ActiveJobs, Snapshot
from pyss_adapter.core.easy import EasyScheduler
from pyss_adapter.core.engine import Engine
from pyss_adapter.core.jobs import SimJobs


def _forward_jobs(
    snapshot: Snapshot,
    running_end_s: np.ndarray,
    waiting_run_s: np.ndarray,
    extra: RequestBatch | None,
    extra_run_s: np.ndarray | None,
) -> tuple[SimJobs, int]:
    """The jobs of :func:`forward_starts`' run (running, waiting, extra) and how many run."""
    now = float(snapshot.time_s)
    run, wait = snapshot.running, snapshot.waiting
    queued = wait.requests if extra is None else wait.requests.concat(extra)
    run_s = np.asarray(waiting_run_s, float)
    if extra is not None:
        run_s = np.concatenate([run_s, np.asarray(extra_run_s, float)])
    n_run, n_q = len(run), len(queued)
    left = np.maximum(np.asarray(running_end_s, float) - now, 1.0)
    # the scheduler plans with the time limits, the running jobs' too (EASY's reservations);
    # only what the jobs run is predicted
    run_limit = run.requests.req_time_s
    run_estimate = np.where(run_limit > 0, np.maximum(run.start_s + run_limit - now, left), left)
    limit = queued.req_time_s
    predicted = np.maximum(run_s, 1.0)
    runtime = np.where(limit > 0, np.minimum(predicted, limit), predicted)
    estimate = np.where(limit > 0, limit, runtime)
    procs = np.concatenate([run.used_procs, queued.procs]).astype(np.int64)
    procs = np.clip(procs, 1, snapshot.machine_procs)
    size = n_run + n_q
    jobs = SimJobs(
        job_id=np.arange(size), submit_s=np.full(size, now),
        runtime_s=np.concatenate([left, runtime]),
        estimate_s=np.concatenate([run_estimate, estimate]),
        n_procs=procs, user_id=np.zeros(size, np.int64),
        machine_procs=int(snapshot.machine_procs), mode="forward",
    )  # fmt: skip
    return jobs, n_run


def forward_starts(
    snapshot: Snapshot,
    running_end_s: np.ndarray,
    waiting_run_s: np.ndarray,
    extra: RequestBatch | None = None,
    extra_run_s: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (snapshot seconds) of every running, then waiting, then extra job, by
    EASY from the snapshot's instant with no other arrival (``Engine.from_state``).

    running_end_s : (r,) predicted end of each running job (after ``time_s``).
    waiting_run_s : (w,) predicted runtime of each waiting job, seconds (> 0).
    extra, extra_run_s : requests queued after the waiting jobs (in their order) and their
        predicted runtimes. The scheduler sees each job's time limit as its estimate, a
        running job's as what is left of it (the predicted runtime where there is none), as
        EASY plans its reservations; a job runs min(prediction, limit).
    """
    jobs, n_run = _forward_jobs(snapshot, running_end_s, waiting_run_s, extra, extra_run_s)
    start = Engine.from_state(jobs, EasyScheduler(), snapshot.time_s, n_run).run().start_s
    return start, start + jobs.runtime_s


class _Started(Exception):  # a signal, not an error
    """The job asked about has started: the forward run has its answer."""


@dataclass(frozen=True)
class _StopAtStart:
    """A submit policy that ends the forward run when job ``target`` starts (it hears of no
    submission: ``Engine.from_state`` has none left)."""

    target: int

    def on_submit(self, engine: Engine, j: int, now: float) -> None:
        return None

    def on_start(self, engine: Engine, j: int, now: float) -> None:
        if j == self.target:
            raise _Started


def forward_start_last(
    snapshot: Snapshot,
    running_end_s: np.ndarray,
    waiting_run_s: np.ndarray,
    extra: RequestBatch,
    extra_run_s: np.ndarray,
) -> float:
    """The start of the last of ``extra`` in :func:`forward_starts` (the same run, stopped as
    soon as that job starts: nothing after its start changes it, so the answer is equal)."""
    jobs, n_run = _forward_jobs(snapshot, running_end_s, waiting_run_s, extra, extra_run_s)
    target = len(jobs) - 1
    engine = Engine.from_state(
        jobs, EasyScheduler(), snapshot.time_s, n_run, policy=_StopAtStart(target)
    )
    try:
        engine.run()
    except _Started:
        pass
    return float(engine.start_s[target])


def forward_start_each(
    snapshot: Snapshot,
    running_end_s: np.ndarray,
    waiting_run_s: np.ndarray,
    requests: RequestBatch,
    requests_run_s: np.ndarray,
) -> np.ndarray:
    """Each request's :func:`forward_start_last` queued alone after the waiting jobs, read
    off one forward run of the queue without them (``pyss_adapter.core.start_profile``:
    before it starts a request queued last changes nothing ahead of it, and its runtime plays
    no part; equal answers). Its scheduler's estimate is its time limit, else its runtime,
    as :func:`_forward_jobs` sets it."""
    from pyss_adapter.core.start_profile import start_profile

    jobs, n_run = _forward_jobs(snapshot, running_end_s, waiting_run_s, None, None)
    starts = start_profile(jobs, float(snapshot.time_s), n_run)
    limit = np.asarray(requests.req_time_s, dtype=float)
    predicted = np.maximum(np.asarray(requests_run_s, dtype=float), 1.0)
    estimate = np.where(limit > 0, limit, predicted)  # a runtime capped by the limit
    procs = np.clip(requests.procs, 1, snapshot.machine_procs)
    return np.array([starts.start_s(int(p), float(e)) for p, e in zip(procs, estimate,
                                                                       strict=True)])  # fmt: skip


def advance(
    snapshot: Snapshot, t: float, running_end_s: np.ndarray, waiting_run_s: np.ndarray
) -> Snapshot:
    """``snapshot`` at ``t`` (>= its time) under EASY with the given predictions
    (:func:`forward_starts`): the jobs started by ``t`` and not ended run, the rest wait."""
    now = float(snapshot.time_s)
    if t < now:
        raise ValueError(f"t ({t}) is before the snapshot's time ({now})")
    run, wait = snapshot.running, snapshot.waiting
    n_run = len(run)
    if len(wait) == 0:
        ended = np.asarray(running_end_s, float) <= t
        return replace(snapshot, time_s=float(t), running=run.take(~ended))
    start, end = forward_starts(snapshot, running_end_s, waiting_run_s)
    run_keep = end[:n_run] > t
    w_start, w_end = start[n_run:], end[n_run:]
    started = (w_start <= t) & (w_end > t)
    waiting = w_start > t
    new_running = ActiveJobs(
        run.requests.take(run_keep).concat(wait.requests.take(started)),
        np.concatenate([run.start_s[run_keep], w_start[started]]),
        np.concatenate([run.used_procs[run_keep], wait.requests.procs[started]]),
    )
    return replace(snapshot, time_s=float(t), running=new_running, waiting=wait.take(waiting))


def predicted_ends(
    snapshot: Snapshot,
    fractions: LimitFractions | None,
    ranges_of: Callable[[RequestBatch], Sequence[RangeSet]],
) -> np.ndarray:
    """Predicted end (snapshot seconds) of each running job: its start plus its runtime
    *given how long it has already run*, and at least one second from now (the scheduler
    has not seen it end yet). A job with a time limit: ``fractions`` (its owner's finished
    jobs' runtime / limit, conditioned on having run this far,
    ``LimitFractions.runtime_given_elapsed``); without a limit (or without ``fractions``):
    its rangeSet conditioned on ``R > elapsed`` (``remaining.runtime_given_elapsed``). Both
    are capped by the limit (``predictor.core.runtime.remaining``).

    fractions : the limit fractions of the history the predictor was fitted on.
    ranges_of : the runtime rangeSets of some running jobs' requests (asked only for the
        jobs that need them).
    """
    running, now = snapshot.running, float(snapshot.time_s)
    limit = running.requests.req_time_s
    elapsed = running.elapsed_s(now)
    run = np.zeros(len(running))
    by_fraction = limit > 0 if fractions is not None else np.zeros(len(running), bool)
    if by_fraction.any():
        users = running.requests.user[by_fraction]
        run[by_fraction] = fractions.runtime_given_elapsed(  # type: ignore[union-attr]
            users, elapsed[by_fraction], limit[by_fraction]
        )
    rest = np.flatnonzero(~by_fraction)
    if rest.size:
        ranges = ranges_of(running.requests.take(rest))
        run[rest] = [
            runtime_given_elapsed(r, float(elapsed[k]), float(limit[k]))
            for r, k in zip(ranges, rest, strict=True)
        ]
    return np.maximum(running.start_s + run, now + 1.0)
