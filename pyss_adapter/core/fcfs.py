"""First come, first served: start jobs from the head of the queue while they fit."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyss_adapter.core.engine import Engine


def start_head_jobs(engine: Engine) -> None:
    """Start queued jobs in arrival order until the first that does not fit (spec, EASY step 1)."""
    queue, procs = engine.queue, engine.procs
    k, size = 0, len(queue)
    while k < size and procs[queue[k]] <= engine.free:
        engine.start(queue[k])
        k += 1
    if k:
        del queue[:k]


class FcfsScheduler:
    """No backfilling: a blocked head blocks everybody."""

    name = "fcfs"

    def schedule(self, engine: Engine) -> None:
        start_head_jobs(engine)

    def schedule_new(self, engine: Engine, j: int) -> None:
        """Only a new job that is alone in the queue can start."""
        if len(engine.queue) == 1:
            start_head_jobs(engine)
