"""Hold-queue semantics (seed "End-to-End Predictions-Based Resource Management Framework
for Supercomputer Jobs", Section IV-B).

When a job arriving at ``c`` is delayed to ``f``, it becomes the *head* of the hold queue.
Every job arriving in ``[c, f)`` queues behind it, first come first served, and is not
judged on its own. At ``f`` the head goes to the batch system; each follower arriving at
``a`` goes at ``f + (a - c)``: the block keeps the spacing it had at arrival, shifted by the
head's delay. Jobs arriving at or after ``f`` are judged afresh (they may start a new hold),
so a hold never grows into an endless chain.

The functions are pure so the replay (in memory, :class:`HoldQueue`) and the live service
(rows in a database, Celery releases) apply the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


def joins_hold(arrival_s: float, head_arrival_s: float, head_release_s: float) -> bool:
    """Whether a job arriving at ``arrival_s`` queues behind a head held over ``[c, f)``."""
    return head_arrival_s <= arrival_s < head_release_s


def release_times(
    head_arrival_s: float, head_release_s: float, arrivals_s: np.ndarray | float
) -> np.ndarray:
    """Submission times of followers: ``f + (a - c)`` (original spacing kept); shape of a."""
    return float(head_release_s) + (np.asarray(arrivals_s, dtype=float) - float(head_arrival_s))


def shifted_release(
    release_s: float, old_head_release_s: float, new_head_release_s: float, arrival_s: float
) -> float:
    """A follower's release after the head is released early (or late) at a new time:
    the block moves with the head, never before the follower's own arrival."""
    return max(float(arrival_s), release_s + (new_head_release_s - old_head_release_s))


@dataclass
class HeldJob:
    """A job in the hold queue: what it is, when it arrived, when it will be submitted."""

    job: Any
    arrival_s: float
    release_s: float
    head: bool = False


@dataclass
class HoldQueue:
    """One hold at a time, in memory (the replay's hold queue).

    ``hold`` makes a head; ``admit`` queues a later arrival behind it; ``due`` pops the jobs
    whose release time has come, in FCFS order.
    """

    head: HeldJob | None = None
    jobs: list[HeldJob] = field(default_factory=list)

    def holding(self, now_s: float) -> bool:
        """True while a head is held and ``now_s`` is before its release."""
        return self.head is not None and joins_hold(now_s, self.head.arrival_s, self.head.release_s)

    def hold(self, job: Any, now_s: float, release_s: float) -> HeldJob:
        if self.holding(now_s):
            raise ValueError(
                f"a head is already held until {self.head.release_s} s; "  # type: ignore[union-attr]
                f"a job arriving at {now_s} s must queue behind it (admit)"
            )
        if release_s <= now_s:
            raise ValueError(f"release {release_s} s is not after the arrival {now_s} s")
        self.head = HeldJob(job, float(now_s), float(release_s), head=True)
        self.jobs.append(self.head)
        return self.head

    def admit(self, job: Any, now_s: float) -> HeldJob:
        """Queue a job arriving while the head is held; its release keeps the spacing."""
        if not self.holding(now_s):
            raise ValueError(f"no job is held at {now_s} s: nothing to queue behind")
        head = self.head
        assert head is not None
        release = float(release_times(head.arrival_s, head.release_s, now_s))
        held = HeldJob(job, float(now_s), release)
        self.jobs.append(held)
        return held

    def due(self, now_s: float) -> list[HeldJob]:
        """Pop and return the held jobs with ``release_s <= now_s``, FCFS."""
        out = [h for h in self.jobs if h.release_s <= now_s]
        if out:
            self.jobs = [h for h in self.jobs if h.release_s > now_s]
            if self.head is not None and self.head in out and not self.jobs:
                self.head = None
        return out

    def next_release_s(self) -> float | None:
        return min((h.release_s for h in self.jobs), default=None)

    def __len__(self) -> int:
        return len(self.jobs)
