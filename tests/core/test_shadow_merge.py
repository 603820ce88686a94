"""EASY's shadow: the lazy merge in ``shadow_of`` gives what walking the engine's whole
``expected_releases()`` gave, on random running sets with jobs at, before and past their
expected ends, released or not, ties included."""

from __future__ import annotations

import math
import random
from bisect import insort
from types import SimpleNamespace

from pyss_adapter.core.easy import shadow_of
from pyss_adapter.core.engine import Engine


def reference(engine, need: int) -> tuple[float, int]:
    """The walk before the merge: every release built (EASY++ rule for jobs past their end)
    and sorted, then walked."""
    releases = []
    for expected, _, j in engine.running:
        if expected > engine.now:
            releases.append((expected, engine.procs[j]))
        elif not engine.released[j]:
            end = max(engine.start_s[j] + engine.requested[j], engine.now + 1.0)
            releases.append((end, engine.procs[j]))
    avail, shadow = engine.free, math.inf
    for expected, p in sorted(releases):
        if expected > shadow:
            break
        avail += p
        if shadow == math.inf and avail >= need:
            shadow = expected
    return shadow, avail - need


def random_engine(rng: random.Random) -> SimpleNamespace:
    now = 1000.0
    n = rng.randint(0, 30)
    running: list[tuple[float, int, int]] = []
    procs = [rng.choice([1, 2, 4, 8, 16]) for _ in range(n)]
    start = [now - rng.choice([0, 10, 100, 500]) for _ in range(n)]
    requested = [rng.choice([1.0, 50.0, 600.0, 5000.0]) for _ in range(n)]
    released = [0] * n
    for j in range(n):  # ends on a coarse grid, so ties and "at now" are common
        expected = now + rng.choice([-200, -1, 0, 0, 1, 50, 50, 300, 1000])
        released[j] = int(expected <= now and rng.random() < 0.5)
        insort(running, (expected, j + 1, j))
    engine = SimpleNamespace(
        now=now, free=rng.randint(0, 8), running=running, procs=procs, start_s=start,
        requested=requested, released=released,
    )  # fmt: skip
    engine.overdue_releases = lambda: Engine.overdue_releases(engine)
    return engine


def test_the_lazy_merge_gives_the_whole_walks_shadow_and_extra() -> None:
    rng = random.Random(7)
    slow = 0
    for _ in range(3000):
        engine = random_engine(rng)
        slow += bool(engine.running and engine.running[0][0] <= engine.now)
        for need in (1, 3, 8, 17, 40, 1000):
            assert shadow_of(engine, need) == reference(engine, need)
    assert slow > 1000  # the re-timed prefix was exercised
