"""The wait a site tells a user, from its two figures: the rule, chosen on the site's past.

A live answer has two waits for a new request (``live_bundle.with_queue``): ``h``, the
history-based estimate (jobs like this one in states like this one), and ``q``, the queue-based
start (EASY run forward on the current queue with predicted runtimes, what ``squeue --start``
gives). The headline combines them by one of four rules:

==========  =================================  ==============================================
rule        headline wait                      when it is right
==========  =================================  ==============================================
``later``   ``max(h, q)``                      the queue is known and nothing overtakes it (default)
``blend``   ``sqrt((h + 1)(q + 1)) - 1``       both err, on a log scale
``history`` ``h``                              the scheduler is not EASY on this queue
``earlier`` ``min(h, q)``                      each over-predicts in its own states
==========  =================================  ==============================================

No rule is best everywhere. ``later`` was the only rule before: a request cannot start before
the jobs queued ahead of it have run, whatever similar jobs waited in the past, and it may wait
longer than the queue says, which the history catches. On the real logs it erred most. On the
second half of the tuning parts of KTH-SP2, SDSC-SP2 and CTC-SP2 (every 20th or 50th job,
answered as a site answers) its mean absolute error was 13,495, 13,013 and 17,648 s; the
history estimate's 8,733, 10,063 and 17,001 s; ``blend``'s 7,967, 10,006 and 16,309 s
(docs/results.md, "Which wait a site tells"): real schedulers start many jobs before an EASY
run on predicted runtimes says. On a site that is EASY itself, the queue is what happens.

So the rule is chosen, like every other setting, from the past only: at each fit every rule
scores the last finished jobs of the fitted history, each on the answer the site told it at
its arrival where one was kept (:mod:`jobmolding.core.told`), else answered again from the
state at its arrival (:mod:`jobmolding.core.headline_scores`). :data:`DEFAULT` (``later``) is
kept unless another rule's mean absolute error is lower by more than :data:`SWITCH_Z` standard
errors of the paired differences (``mean(d) > z * std(d) / sqrt(n)``, ``d = |e_later| -
|e_rule|`` per job). Waits' errors are heavy-tailed, so the least mean on 200 jobs alone is
noisy; and ``later`` is the one rule that never tells a whole-machine request behind queued
whole-machine jobs that it starts before they have run (issue 19), so leaving it needs
evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

Combine = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _blend(h: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.sqrt((h + 1.0) * (q + 1.0)) - 1.0


RULES: dict[str, Combine] = {
    "later": np.maximum,
    "blend": _blend,
    "history": lambda h, q: np.asarray(h, dtype=float),
    "earlier": np.minimum,
}
DEFAULT = "later"
SWITCH_Z = 2.0  # standard errors by which another rule must beat DEFAULT to be kept
SAYS = {
    "later": "the later of the history estimate and the queue-based start",
    "history": "the history estimate (the queue-based start is shown beside it)",
    "earlier": "the earlier of the history estimate and the queue-based start",
    "blend": "the geometric mean of the history estimate and the queue-based start",
}
MIN_JOBS = 20  # fewer scored jobs: DEFAULT (too few to tell the rules apart)


def headline_wait(rule: str, history_s: np.ndarray, queue_s: np.ndarray) -> np.ndarray:
    """The headline waits (seconds, >= 0) of ``rule`` from the two figures, arrays of one shape.
    A request without a queue-based start (``nan``) is told its history estimate."""
    h = np.maximum(np.asarray(history_s, dtype=float), 0.0)
    q = np.maximum(np.asarray(queue_s, dtype=float), 0.0)  # nan stays nan
    known = np.isfinite(q)
    out = np.where(known, RULES[rule](h, np.where(known, q, h)), h)
    return np.maximum(out, 0.0)


@dataclass(frozen=True)
class RuleChoice:
    """The rule kept and what each rule erred on the scored jobs.

    rule : the kept rule. jobs : the jobs scored. mae_s : each rule's mean absolute error
    (seconds) on them (empty when none were scored). reason : one sentence for the answer.
    told : how many of the jobs were scored on the answer the site told them at their
    arrival (``told``); the others were answered again from the state then.
    """

    rule: str = DEFAULT
    jobs: int = 0
    mae_s: dict[str, float] = field(default_factory=dict)
    reason: str = "no finished jobs scored yet: the later of the two"
    told: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"rule": self.rule, "says": SAYS[self.rule], "jobs": self.jobs,
                "told": self.told, "mae_s": dict(self.mae_s), "reason": self.reason}  # fmt: skip


def _how(told: int, n: int) -> str:
    """How ``n`` scored jobs were answered, ``told`` of them as the site told them."""
    if told <= 0:
        return "each answered again from the state at its arrival"
    if told >= n:
        return "each on the answer the site told it at its arrival"
    return (f"each answered at its arrival ({told} as the site told them, {n - told} "
            "answered again from the state then)")  # fmt: skip


def choose_rule(
    history_s: np.ndarray, queue_s: np.ndarray, actual_s: np.ndarray, told: int = 0
) -> RuleChoice:
    """The rule of :data:`RULES` kept on jobs whose two figures and actual waits (seconds,
    arrays of one shape) are given: :data:`DEFAULT`, unless the rule with the least mean
    absolute error beats it by more than :data:`SWITCH_Z` standard errors of the paired
    differences (module docstring). Fewer than :data:`MIN_JOBS` jobs: :data:`DEFAULT`.
    ``told``: how many of the figures are the answers the site gave (said in the reason)."""
    y = np.asarray(actual_s, dtype=float)
    if y.size < MIN_JOBS:
        return RuleChoice(jobs=int(y.size), reason=f"{y.size} finished jobs scored, fewer than "
                          f"{MIN_JOBS}: the later of the two", told=told)  # fmt: skip
    err = {r: np.abs(headline_wait(r, history_s, queue_s) - y) for r in RULES}
    mae = {r: float(e.mean()) for r, e in err.items()}
    best = min(RULES, key=lambda r: (mae[r], list(RULES).index(r)))
    gain = err[DEFAULT] - err[best]
    margin = SWITCH_Z * float(gain.std(ddof=1)) / np.sqrt(y.size)
    jobs = f"this history's last {y.size} finished jobs, {_how(told, int(y.size))}"
    if best == DEFAULT or float(gain.mean()) <= margin:
        return RuleChoice(DEFAULT, int(y.size), mae, f"on {jobs}, no rule erred clearly less "
                          f"than the later of the two ({mae[DEFAULT]:.0f} s; the least: {best}, "
                          f"{mae[best]:.0f} s)", told)  # fmt: skip
    reason = (f"least mean absolute error on {jobs} ({mae[best]:.0f} s against "
              f"{mae[DEFAULT]:.0f} s for the later of the two, by more than {SWITCH_Z:g} "
              "standard errors)")  # fmt: skip
    return RuleChoice(best, int(y.size), mae, reason, told)
