"""Progress over consecutive stages whose costs are planned ahead (a molding evaluation's
tuning replays, then its replays): one callback in [0, 1] for the whole run."""

from __future__ import annotations

from collections.abc import Callable

ProgressFn = Callable[[float], None]


class Stages:
    """Progress over consecutive stages whose costs are planned ahead (weights in any unit):
    stage ``k``'s fractions fill its share ``weight_k / total`` of the whole, after the
    stages before it. The whole only grows and never passes 1; every call reaches
    ``progress`` (a task's callback checks the run's time limit there, so a long stage
    that reports keeps it checked). ``progress`` None: stages report nothing."""

    def __init__(self, progress: ProgressFn | None, total: float) -> None:
        self.progress = progress
        self.total = max(float(total), 1e-12)
        self.done = 0.0  # weight of the stages begun so far (their ends)
        self.shown = 0.0

    def stage(self, weight: float) -> ProgressFn | None:
        """The callback of the next stage, of ``weight``."""
        if self.progress is None:
            return None
        start, weight = self.done, max(float(weight), 0.0)
        self.done += weight
        return lambda fraction: self._show(start + weight * min(max(fraction, 0.0), 1.0))

    def reach(self, done: float) -> None:
        """Move the whole on to ``done`` (stages planned and not run, e.g. a replay
        reused): the next stage starts there."""
        self.done = max(self.done, float(done))
        self._show(self.done)

    def _show(self, done: float) -> None:
        if self.progress is not None:
            self.shown = max(self.shown, min(done / self.total, 1.0))
            self.progress(self.shown)
