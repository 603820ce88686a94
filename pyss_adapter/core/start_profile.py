"""One EASY forward run of a queue, then the start of any request arriving last in it.

A request queued last changes nothing for the jobs ahead of it before it starts: EASY
(``easy.py``) starts the head chain first and backfills in arrival order, so in every pass the
request is looked at after each job ahead has been started or passed over, and until it starts
it holds no processors. The run of the queue *without* the request therefore shows every pass
the request would see. After pass ``i`` (time ``t_i``, ``free_i`` processors free):

- while jobs ahead still wait, the head is blocked with its reservation ``(shadow_i,
  extra_i)`` as the pass's backfills left it, and the request starts at the first pass where
  ``p <= free_i and (e <= shadow_i - t_i or p <= extra_i)`` (``easy.backfill``'s test);
- once none waits (pass ``E``), it is the head: it starts at ``t_E`` if it fits, else when
  the running jobs' expected ends free enough processors (``easy.shadow_of``, where
  :func:`~pyss_adapter.core.start_estimate.forward_easy` reads it too).

:func:`start_profile` makes that run once; :meth:`StartProfile.start_s` answers each
(processors, estimate) from the recorded passes with numpy, where ``forward_easy`` runs the
whole queue again for each. The answers are equal: ``tests/core/test_start_profile.py``
compares them with ``forward_easy`` on random queues.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pyss_adapter.core.easy import EasyScheduler, shadow_of
from pyss_adapter.core.engine import Engine
from pyss_adapter.core.jobs import SimJobs


class _Stop(Exception):
    """The passes needed are recorded (the queue ahead is empty, or past ``until_s``)."""


class _Recording(EasyScheduler):
    """EASY, recording the state after each pass that leaves jobs waiting."""

    def __init__(self, until_s: float) -> None:
        super().__init__()
        self.until_s = until_s
        self.now: list[float] = []
        self.free: list[int] = []
        self.shadow: list[float] = []
        self.extra: list[int] = []
        self.cut = False  # stopped past until_s

    def schedule(self, engine: Engine) -> None:
        if engine.now > self.until_s:
            self.cut = True
            raise _Stop
        super().schedule(engine)
        if not engine.queue:
            raise _Stop  # the engine stays as pass E left it
        shadow, extra = shadow_of(engine, engine.procs[engine.queue[0]])
        self.now.append(engine.now)
        self.free.append(engine.free)
        self.shadow.append(shadow)
        self.extra.append(extra)


@dataclass
class StartProfile:
    """The passes of one forward run (see the module docstring) and the engine at pass E."""

    machine_procs: int
    now: np.ndarray
    free: np.ndarray
    horizon: np.ndarray  # shadow - now of each pass
    extra: np.ndarray
    tail: Engine | None  # frozen after pass E; None when the run was cut at until_s

    def start_s(self, procs: int, estimate_s: float) -> float:
        """Absolute start of a request of ``procs`` for ``estimate_s`` arriving last, or
        ``inf`` when it starts after the profile's ``until_s``."""
        p = int(min(max(int(procs), 1), self.machine_procs))
        e = max(float(estimate_s), 1.0)
        if self.now.size:
            ok = (p <= self.free) & ((e <= self.horizon) | (p <= self.extra))
            k = int(np.argmax(ok))
            if ok[k]:
                return float(self.now[k])
        if self.tail is None:
            return math.inf
        if p <= self.tail.free:
            return float(self.tail.now)
        return shadow_of(self.tail, p)[0]


def start_profile(
    now: float,
    running: list[tuple[float, int]],
    queue: list[tuple[int, float]],
    machine_procs: int,
    until_s: float = math.inf,
) -> StartProfile:
    """The passes of EASY run forward from ``now`` on ``running`` (expected end, processors)
    and ``queue`` (processors, estimate) in arrival order, runtimes = estimates, as
    :func:`~pyss_adapter.core.start_estimate.forward_easy` sets them up; passes after
    ``until_s`` are not run (a request starting after it answers ``inf``)."""
    left = [max(end, now + 1.0) - now for end, _ in running]
    est = np.array(left + [e for _, e in queue], dtype=np.float64)
    procs = np.array([p for _, p in running] + [p for p, _ in queue], dtype=np.int64)
    size = len(est)
    jobs = SimJobs(
        job_id=np.arange(size), submit_s=np.full(size, now), runtime_s=est, estimate_s=est,
        n_procs=procs, user_id=np.zeros(size, np.int64), machine_procs=machine_procs,
        mode="forward",
    )  # fmt: skip
    recorder = _Recording(until_s)
    engine = Engine.from_state(jobs, recorder, now, len(running))
    try:  # every job fits the machine (the engine checks), so the queue empties in a pass
        engine.run()
    except _Stop:
        pass
    now_a = np.array(recorder.now, dtype=np.float64)
    return StartProfile(
        machine_procs=int(machine_procs),
        now=now_a,
        free=np.array(recorder.free, dtype=np.int64),
        horizon=np.array(recorder.shadow, dtype=np.float64) - now_a,
        extra=np.array(recorder.extra, dtype=np.int64),
        tail=None if recorder.cut else engine,
    )
