"""One EASY forward run of a queue, then the start of any request arriving last in it.

A request queued last changes nothing for the jobs ahead of it before it starts: EASY
(``easy.py``) starts the head chain first and backfills in arrival order, so in every pass the
request is looked at after each job ahead has been started or passed over, and until it starts
it holds no processors. The run of the queue *without* the request therefore shows every pass
the request would see. After pass ``i`` (time ``t_i``, ``free_i`` processors free):

- while jobs ahead still wait, the head is blocked with its reservation ``(shadow_i,
  extra_i)`` as the pass's backfills left it, and the request starts at the first pass where
  ``p <= free_i and (e <= shadow_i - t_i or p <= extra_i)`` (``easy.backfill``'s test, ``e``
  its estimate);
- once none waits, it is the head: it starts at the first pass where it fits
  (``fcfs.start_head_jobs``).

Its own runtime plays no part before it starts. :func:`start_profile` makes that run once;
:meth:`StartProfile.start_s` answers each (processors, estimate) from the recorded passes with
numpy, where a forward run per request (``start_estimate.forward_easy``,
``jobmolding.core.future.forward_start_last``) runs the whole queue again each time. The
answers are equal: ``tests/core/test_start_profile.py`` compares them on random queues.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pyss_adapter.core.easy import EasyScheduler, shadow_of
from pyss_adapter.core.engine import Engine
from pyss_adapter.core.jobs import SimJobs


class _Stop(Exception):
    """The passes asked for are recorded (the run reached ``until_s``)."""


class _Recording(EasyScheduler):
    """EASY, recording the state after each pass: with jobs left waiting (``ahead``), then
    with none (``alone``)."""

    def __init__(self, until_s: float) -> None:
        super().__init__()
        self.until_s = until_s
        self.ahead: tuple[list[float], list[int], list[float], list[int]] = ([], [], [], [])
        self.alone: tuple[list[float], list[int]] = ([], [])

    def schedule(self, engine: Engine) -> None:
        if engine.now > self.until_s:
            raise _Stop
        super().schedule(engine)
        if not engine.queue:
            self.alone[0].append(engine.now)
            self.alone[1].append(engine.free)
            return
        shadow, extra = shadow_of(engine, engine.procs[engine.queue[0]])
        for column, value in zip(self.ahead, (engine.now, engine.free, shadow, extra),
                                 strict=True):  # fmt: skip
            column.append(value)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class StartProfile:
    """The passes of one forward run (see the module docstring)."""

    machine_procs: int
    now: np.ndarray  # passes with jobs waiting ahead
    free: np.ndarray
    horizon: np.ndarray  # shadow - now
    extra: np.ndarray
    alone_now: np.ndarray  # passes with nobody waiting ahead
    alone_free: np.ndarray
    queue_start_s: np.ndarray  # each queued job's start in this run (NaN: after until_s)

    def start_s(self, procs: int, estimate_s: float) -> float:
        """Absolute start of a request of ``procs`` (clipped to the machine) with the
        scheduler's estimate ``estimate_s`` arriving last, or ``inf`` when it starts after
        the profile's ``until_s``."""
        p = min(max(int(procs), 1), self.machine_procs)
        e = float(estimate_s)
        if self.now.size:
            ok = (p <= self.free) & ((e <= self.horizon) | (p <= self.extra))
            k = int(np.argmax(ok))
            if ok[k]:
                return float(self.now[k])
        if self.alone_now.size:
            fits = p <= self.alone_free
            k = int(np.argmax(fits))
            if fits[k]:
                return float(self.alone_now[k])
        return math.inf


def start_profile(
    jobs: SimJobs, now: float, n_running: int, until_s: float = math.inf
) -> StartProfile:
    """The passes of EASY run forward from ``now`` on ``jobs`` (the first ``n_running``
    running, the rest queued in order; ``Engine.from_state``) until every job has started
    and ended, or until ``until_s`` (a request starting after it answers ``inf``)."""
    recorder = _Recording(until_s)
    engine = Engine.from_state(jobs, recorder, now, n_running)
    try:
        engine.run()
    except _Stop:
        pass
    t, free, shadow, extra = recorder.ahead
    t_a = np.array(t, dtype=np.float64)
    queued = np.array(engine.start_s[n_running:], dtype=np.float64)
    return StartProfile(
        machine_procs=int(jobs.machine_procs),
        now=t_a,
        free=np.array(free, dtype=np.int64),
        horizon=np.array(shadow, dtype=np.float64) - t_a,
        extra=np.array(extra, dtype=np.int64),
        alone_now=np.array(recorder.alone[0], dtype=np.float64),
        alone_free=np.array(recorder.alone[1], dtype=np.int64),
        queue_start_s=queued,
    )


def easy_profile(
    now: float,
    running: list[tuple[float, int]],
    queue: list[tuple[int, float]],
    machine_procs: int,
    until_s: float = math.inf,
) -> StartProfile:
    """:func:`start_profile` of the queue as ``forward_easy`` sets it up: ``running`` holds
    (expected end, processors), ``queue`` (processors, estimate) in arrival order, every job
    running for its estimate (a running job past its end ends in a second)."""
    from pyss_adapter.core.start_estimate import forward_jobs

    return start_profile(forward_jobs(now, running, queue, machine_procs), now, len(running),
                         until_s)  # fmt: skip
