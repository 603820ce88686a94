"""EASY backfilling (spec: "EASY backfilling"), as PySS's ``EasyBackfillScheduler``.

1. Start jobs from the head of the FCFS queue while they fit.
2. Reserve the blocked head at the *shadow* time, the earliest expected end
   (``start + estimate``) of running jobs at which enough processors are free;
   ``extra`` = processors free at the shadow beyond the head's need (every job
   expected to end exactly at the shadow is released).
3. Scan the rest of the queue once, in arrival order: start a job if it fits now
   and either ends (by its estimate) no later than the shadow or uses no more than
   ``extra`` processors (which then shrink by its size).

PySS computes the same thing with a CPU-time-slice snapshot; since every job in it
starts no later than now, free processors never decrease before the shadow nor
after it, so the two tests above are exactly its "fits in the snapshot" test.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pyss_adapter.core.fcfs import start_head_jobs

if TYPE_CHECKING:
    from pyss_adapter.core.engine import Engine


def head_reservation(engine: Engine, head: int) -> tuple[float, int]:
    """Return ``(shadow_s, extra_procs)`` for the blocked ``head`` (:func:`shadow_of` its
    size), and keep the head's first reservation."""
    shadow, extra = shadow_of(engine, engine.procs[head])
    if math.isnan(engine.reservation[head]):
        engine.reservation[head] = shadow
    return shadow, extra


def shadow_of(engine: Engine, need: int) -> tuple[float, int]:
    """``(shadow_s, extra_procs)`` of a blocked job of ``need`` processors, the engine unchanged.

    Walks the running jobs in order of expected end (``start + estimate``) until
    enough processors are free, then takes every job ending at that same time.
    When a job is at or past its estimated end the engine's
    :meth:`~pyss_adapter.core.engine.Engine.expected_releases` says when to expect it.

    The result depends only on which ends are at or before the shadow, not on their order
    among equal ends, so the jobs at or past their end (a prefix of ``engine.running``,
    re-timed and sorted by ``Engine.overdue_releases``) are merged lazily with the rest,
    already in order, instead of building and sorting ``expected_releases()`` whole on every
    pass: in a forward run every event is a job's end, so that list was built about 85 times
    per why-block on HPC2N (its long queues; 3 of 13 ms per warm answer).
    """
    avail = engine.free
    shadow = math.inf
    running, procs = engine.running, engine.procs
    first, late = engine.overdue_releases()
    k, n, i = first, len(running), 0
    while True:
        if i < len(late) and (k >= n or late[i][0] <= running[k][0]):
            expected, p = late[i]
            i += 1
        elif k < n:
            expected, p = running[k][0], procs[running[k][2]]
            k += 1
        else:
            break
        if expected > shadow:
            break
        avail += p
        if shadow == math.inf and avail >= need:
            shadow = expected
    return shadow, avail - need


def backfill(engine: Engine, shadow: float, extra: int) -> int:
    """One scan of ``queue[1:]`` in arrival order (EASY step 3); return the extra left."""
    queue, procs, est, queued_procs = engine.queue, engine.procs, engine.est, engine.queued_procs
    free = engine.free
    horizon = shadow - engine.now
    started: list[int] = []
    for pos in range(1, len(queue)):
        j = queue[pos]
        p = procs[j]
        if p > free:
            continue
        if est[j] > horizon:
            if p > extra:
                continue
            extra -= p
        engine.start(j)
        free -= p
        started.append(pos)
        if free < queued_procs[0]:  # the narrowest job left does not fit
            break
    for pos in reversed(started):
        del queue[pos]
    return extra


class EasyScheduler:
    """EASY: backfill without delaying the head's reservation."""

    name = "easy"

    def __init__(self) -> None:
        # (head, shadow, extra) left by the last pass: valid while the engine calls
        # schedule_new (nothing freed, no job past its estimate), since only our own
        # backfills change the running set then, and they are counted in ``extra``.
        self._reservation: tuple[int, float, int] | None = None

    def schedule(self, engine: Engine) -> None:
        self._reservation = None
        queue, procs = engine.queue, engine.procs
        if not queue:
            return
        if procs[queue[0]] <= engine.free:
            start_head_jobs(engine)
        if len(queue) < 2 or engine.free == 0:
            return
        # The blocked head needs more than the free processors: when nobody in the
        # queue fits them there is nothing to backfill.
        if engine.free < engine.queued_procs[0]:
            return
        head = queue[0]
        shadow, extra = head_reservation(engine, head)
        self._reservation = (head, shadow, backfill(engine, shadow, extra))

    def schedule_new(self, engine: Engine, j: int) -> None:
        """Pass for submission ``j`` when the rest of the queue is known not to start.

        After a full pass no queued job fits the free processors or the head's
        reservation; until processors are freed that stays true (later ends only
        make "ends before the shadow" harder), so only ``j`` needs the test.
        """
        queue = engine.queue
        p = engine.procs[j]
        if p > engine.free:
            return
        if len(queue) == 1:
            self._reservation = None
            engine.start(j)
            queue.pop()
            return
        cached = self._reservation
        if cached is not None and cached[0] == queue[0]:
            shadow, extra = cached[1], cached[2]
        else:
            shadow, extra = head_reservation(engine, queue[0])
        if engine.now + engine.est[j] <= shadow:
            engine.start(j)
            queue.pop()
        elif p <= extra:
            extra -= p
            engine.start(j)
            queue.pop()
        self._reservation = (queue[0], shadow, extra)
