"""An online, leakage-free guard for APQ (docs/apq.md, "The online guard").

While APQ answers the targets in submit order, the guard keeps the absolute errors of APQ
and of a simple fallback on the *earlier targets whose wait is already known*: target j
counts for target i only if ``row_j < row_i`` and ``start_j = submit_j + wait_j <= submit_i``.
Over the last ``window`` such resolved targets (of the same user, or of all users), ranked
by start time, if

    mean |APQ_j - wait_j|  >  factor x mean |fallback_j - wait_j|

(and at least ``min_resolved`` targets are resolved), target i gets the fallback's answer
(predictor name ``guard_<fallback>``). The errors are those of APQ's own, unguarded
answers, so the guard never feeds on itself. A target's answer depends only on the rows
and targets before it, never on a later job; it does depend on which earlier targets were
asked for (the guard only sees errors of targets that were predicted).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.core.wait.baselines import RecentMedian
from predictor.core.wait.types import WaitContext

FALLBACKS = ("zero", "median")
SCOPES = ("user", "all")


def fallback_waits(ctx: WaitContext, targets: np.ndarray, fallback: str, recent: int) -> np.ndarray:
    """The fallback's answers (s) for ``targets``: 0, or the recent size-class median."""
    if fallback == "zero":
        return np.zeros(len(targets))
    if fallback == "median":
        return RecentMedian(window=recent).fit(ctx).predict_rows(targets).wait_s
    raise ValueError(f"guard_fallback must be one of {FALLBACKS}, got {fallback!r}")


def guard_switch(
    rows: np.ndarray,
    submit: np.ndarray,
    start: np.ndarray,
    group: np.ndarray,
    apq_err: np.ndarray,
    fb_err: np.ndarray,
    window: int,
    factor: float,
    min_resolved: int,
) -> np.ndarray:
    """True where the fallback answers instead of APQ (see module docstring).

    Parameters
    ----------
    rows, submit, start, group : (n,) per target: row, submit and start time (s; +inf when
        never started), and the group whose targets are compared (user id, or one value).
    apq_err, fb_err : (n,) absolute errors (s) of APQ and the fallback per target, each
        read only once its start is at or before the current target's submit time.
    window, factor, min_resolved : the last ``window`` resolved targets; switch when APQ's
        mean error exceeds ``factor`` x the fallback's, given ``min_resolved`` of them.
    """
    use = np.zeros(len(rows), dtype=bool)
    for g in np.unique(group):
        members = np.flatnonzero(group == g)
        order = members[np.lexsort((rows[members], start[members]))]
        starts = start[order]
        for i in members:
            p = int(np.searchsorted(starts, submit[i], side="right"))
            cand = order[max(0, p - window - 64) : p]
            cand = cand[rows[cand] < rows[i]][-window:]
            if len(cand) >= min_resolved:
                use[i] = apq_err[cand].mean() > factor * fb_err[cand].mean()
    return use


def apply_guard(
    ctx: WaitContext,
    targets: np.ndarray,
    wait_s: np.ndarray,
    names: np.ndarray,
    params: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Guarded (wait_s, names) and the switch mask, from APQ's answers for ``targets``."""
    if params.guard_scope not in SCOPES:
        raise ValueError(f"guard_scope must be one of {SCOPES}, got {params.guard_scope!r}")
    a = ctx.state.arrays
    fb = fallback_waits(ctx, targets, params.guard_fallback, params.fallback_recent)
    actual = a.start[targets] - a.submit[targets]
    known = np.isfinite(actual)
    apq_err = np.where(known, np.abs(wait_s - actual), 0.0)
    fb_err = np.where(known, np.abs(fb - actual), 0.0)
    group = a.user[targets] if params.guard_scope == "user" else np.zeros(len(targets))
    use = guard_switch(
        targets,
        a.submit[targets],
        np.where(known, a.start[targets], np.inf),
        group,
        apq_err,
        fb_err,
        params.guard_window,
        params.guard_factor,
        params.guard_min_resolved,
    )
    out_names = names.copy()
    out_names[use] = f"guard_{params.guard_fallback}"
    return np.where(use, fb, wait_s), out_names, use
