"""What a site told a job when the job entered its queue, kept to score the site on later.

A site answers every request with two wait figures (``live_bundle.with_queue``: the history
estimate ``h`` and the queue-based start ``q``) and a runtime point. The headline rule and
the wait interval are chosen, at each fit, on the last finished jobs
(``headline_scores.choose_on_history``). Answering each of those again from the state at its
arrival costs a run of the queue forward per job, with every waiting job's runtime asked for
at that past instant: on SDSC-SP2 about half a replay's CPU (docs/results.md, stop 55). The
answer the site gave when the job arrived is the same kind of answer, from what was known
then, and costs nothing more: it is kept here, by the job's key, and read at the next fit.

A told answer is kept only for a job submitted at the instant it was answered: a job held
for a later submission is not (the state at its release was not answered); a fit answers
such jobs again (``headline_scores.pooled_answers``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

FIELDS = ("history_s", "queue_s", "runtime_s")


@dataclass(frozen=True)
class Told:
    """One job's answer as told (seconds): the history estimate, the queue-based start's wait
    (``nan``: the answer had none) and the runtime point."""

    history_s: float
    queue_s: float
    runtime_s: float

    def as_dict(self) -> dict[str, float | None]:
        """JSON-ready (``nan`` as None)."""
        pairs = zip(FIELDS, self.values(), strict=True)
        return {f: (None if math.isnan(v) else v) for f, v in pairs}

    def values(self) -> tuple[float, float, float]:
        return (self.history_s, self.queue_s, self.runtime_s)

    @classmethod
    def from_dict(cls, body: Mapping[str, Any]) -> Told:
        """Read back :meth:`as_dict` (a missing queue start as ``nan``); KeyError, TypeError
        or ValueError on a body that is not one."""
        h, r = float(body["history_s"]), float(body["runtime_s"])
        q = body.get("queue_s")
        return cls(h, float("nan") if q is None else float(q), r)


@dataclass(frozen=True)
class ToldRows:
    """Told answers for a list of jobs: ``kept`` (n,) bool, and the three figures (n,),
    ``nan`` where nothing was kept."""

    kept: np.ndarray
    history_s: np.ndarray
    queue_s: np.ndarray
    runtime_s: np.ndarray

    @classmethod
    def none(cls, n: int) -> ToldRows:
        nan = np.full(n, np.nan)
        return cls(np.zeros(n, dtype=bool), nan, nan.copy(), nan.copy())

    @classmethod
    def of(cls, answers: Iterable[Told | None]) -> ToldRows:
        got = list(answers)
        kept = np.array([a is not None for a in got], dtype=bool)
        values = np.array([a.values() if a is not None else (np.nan,) * 3 for a in got], float)
        values = values.reshape(len(got), 3)
        return cls(kept, values[:, 0], values[:, 1], values[:, 2])

    def key(self) -> bytes:
        """The told answers as bytes: equal only for equal answers (a fit memo's key)."""
        return (
            self.kept.tobytes()
            + np.column_stack([self.history_s, self.queue_s, self.runtime_s]).tobytes()
        )


class ToldBook:
    """Told answers by job key, as a replay keeps them (a live site keeps them on its job
    rows, ``holdqueue.services.jobs``)."""

    def __init__(self) -> None:
        self._kept: dict[Hashable, Told] = {}

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, key: Hashable, told: Told) -> None:
        self._kept[key] = told

    def rows(self, keys: Iterable[Hashable]) -> ToldRows:
        """The told answers of ``keys``, in order (not kept: ``kept`` False)."""
        return ToldRows.of(self._kept.get(k) for k in keys)
