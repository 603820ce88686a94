"""What a replay knows about each user's sizes, kept up to date event by event.

Molding draws on three facts per user (seed "End-to-End Predictions-Based Resource
Management Framework for Supercomputer Jobs", Sections IV-A and V-C): the sizes the user has
requested (the candidates), the largest estimate given at each size (``maxPrevious``) and the
runtimes at each size (the roulette wheel). These are the user's *own* submissions: a request
is known when the user submits it, a runtime when the job finishes in the simulation, and
only if it ran at the size the user asked for (the replay's policy calls ``submitted`` and
``finished`` at those instants), so a decision never reads a later fact and the roulette
wheel never draws from its own earlier draws.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np


class UserSizeHistory:
    """Per user: sizes used; per (user, size): the largest estimate and the finished runtimes."""

    def __init__(self) -> None:
        self._sizes: dict[int, set[int]] = defaultdict(set)
        self._max_estimate: dict[tuple[int, int], float] = {}
        self._runtimes: dict[tuple[int, int], list[float]] = defaultdict(list)

    def submitted(self, user: int, procs: int, estimate_s: float) -> None:
        """A job of ``user`` went to the batch system at ``procs`` with ``estimate_s``."""
        key = (int(user), int(procs))
        self._sizes[key[0]].add(key[1])
        if estimate_s > self._max_estimate.get(key, -np.inf):
            self._max_estimate[key] = float(estimate_s)

    def finished(self, user: int, procs: int, runtime_s: float) -> None:
        """A job of ``user`` at ``procs`` ended after ``runtime_s`` in the simulation."""
        self._runtimes[(int(user), int(procs))].append(float(runtime_s))

    def sizes(self, user: int) -> set[int]:
        return self._sizes.get(int(user), set())

    def sizes_with_runtimes(self, user: int) -> set[int]:
        """Sizes at which at least one of the user's jobs has finished."""
        return {s for s in self.sizes(user) if self._runtimes.get((int(user), s))}

    def max_estimate(self, user: int, procs: int) -> float:
        """``maxPrevious``: the user's largest estimate at ``procs`` (NaN if none)."""
        return self._max_estimate.get((int(user), int(procs)), float("nan"))

    def runtimes(self, user: int, procs: int) -> list[float]:
        return self._runtimes.get((int(user), int(procs)), [])
