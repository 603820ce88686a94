"""Replay a log as it happened: every job starts at its recorded start time.

The scheduler for "what the log did": warm-up parts of a molding replay, and the
snapshot-equivalence test (a replay whose state at any instant is the log's). It
starts a queued job as soon as the clock reaches its recorded start (the log's
``submit + wait``), whatever the free processors (a real log may briefly use more
than the machine size the header gives), and asks the engine for a pass at every
recorded start no event marks (:meth:`~pyss_adapter.core.engine.Engine.wake_at`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pyss_adapter.core.engine import Engine


class RecordedScheduler:
    """Starts job ``j`` at ``start_s[j]`` (in the order of the engine's jobs), never earlier.

    A job whose recorded start is before its submission (or release) starts at once.
    """

    name = "recorded"

    def __init__(self, start_s: np.ndarray) -> None:
        start = np.asarray(start_s, dtype=np.float64)
        if not np.isfinite(start).all():
            raise ValueError("every job needs a finite recorded start time")
        self.start_s = start.tolist()
        self._woken: set[float] = set()

    def schedule(self, engine: Engine) -> None:
        now, start, queue = engine.now, self.start_s, engine.queue
        waiting = []
        for j in queue:
            if start[j] <= now:
                engine.start(j)
            else:
                waiting.append(j)
                if start[j] not in self._woken:
                    self._woken.add(start[j])
                    engine.wake_at(start[j])
        queue[:] = waiting
