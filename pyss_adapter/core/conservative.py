"""Conservative backfilling: every queued job holds a reservation.

Each pass rebuilds the free-processor profile from the running jobs' expected
ends and gives every queued job, in arrival order, the earliest slot where it
fits for its whole estimate; the jobs whose slot is *now* start. Rebuilding every
pass is the "compression" done when a job ends early. Not checked against PySS's
``ConservativeScheduler`` job by job (only EASY is).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyss_adapter.core.engine import Engine


class Profile:
    """Free processors as a step function: ``free[k]`` on ``[times[k], times[k + 1])``."""

    def __init__(self, now: float, free_now: int, releases: list[tuple[float, int]]) -> None:
        self.times = [now]
        self.free = [free_now]
        for when, procs in releases:
            if when > self.times[-1]:
                self.times.append(when)
                self.free.append(self.free[-1])
            self.free[-1] += procs

    def earliest(self, procs: int, duration: float) -> float:
        """Earliest breakpoint from which ``procs`` are free for ``duration``."""
        times, free = self.times, self.free
        k = 0
        while True:
            if free[k] >= procs:
                end = times[k] + duration
                m = k + 1
                while m < len(times) and times[m] < end and free[m] >= procs:
                    m += 1
                if m == len(times) or times[m] >= end:
                    return times[k]
                k = m
            k += 1

    def advance(self, now: float) -> None:
        """Forget the past: the profile starts at ``now``."""
        k = bisect_right(self.times, now) - 1
        if k > 0:
            del self.times[:k]
            del self.free[:k]
        self.times[0] = now

    def reserve(self, start: float, duration: float, procs: int) -> None:
        a = self._split(start)
        b = self._split(start + duration)
        for k in range(a, b):
            self.free[k] -= procs

    def _split(self, when: float) -> int:
        k = bisect_left(self.times, when)
        if k < len(self.times) and self.times[k] == when:
            return k
        self.times.insert(k, when)
        self.free.insert(k, self.free[k - 1])
        return k


class ConservativeScheduler:
    name = "conservative"

    def __init__(self) -> None:
        # The profile with every reservation, kept from the last pass: valid while
        # the engine calls schedule_new (nothing freed, no job past its estimate).
        self._profile: Profile | None = None

    def schedule(self, engine: Engine) -> None:
        self._profile = None
        if not engine.queue:
            return
        now = engine.now
        profile = Profile(now, engine.free, engine.expected_releases())
        started = []
        for pos, j in enumerate(engine.queue):
            duration = engine.est[j]
            at = profile.earliest(engine.procs[j], duration)
            profile.reserve(at, duration, engine.procs[j])
            if at == now:
                engine.start(j)
                started.append(pos)
        for pos in reversed(started):
            del engine.queue[pos]
        self._profile = profile

    def schedule_new(self, engine: Engine, j: int) -> None:
        """Reserve only the new job: the others' reservations cannot have changed.

        Every reservation sits at an event time, and no event freed processors
        since the last pass, so a rebuild would give the same profile.
        """
        profile = self._profile
        if profile is None:
            self.schedule(engine)
            return
        profile.advance(engine.now)
        duration = engine.est[j]
        at = profile.earliest(engine.procs[j], duration)
        profile.reserve(at, duration, engine.procs[j])
        if at == engine.now:
            engine.start(j)
            engine.queue.pop()
