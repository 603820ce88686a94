"""``P(start within T)`` that counts the jobs still waiting: the Kaplan-Meier estimate.

:func:`predictor.core.wait.p_within.p_within` reads the share of the nearest jobs *that
started* whose wait was at most ``T``. A job still waiting is not among them, yet it has
already waited ``now - submitted`` and will wait longer. Where many of the recent jobs still
wait (a new site, whose first told jobs to start are the short waits; a backlog) the started
ones are the short waits, and the share overstates the chance.

Here the still-waiting jobs are right-censored observations: job ``j`` waited ``x_j`` (its
wait if it started, the time it has waited so far if not), ``d_j`` whether it started. The
neighbours are the ``k`` jobs, started or not, whose prediction is nearest the request's
(the same log-scale distance), and over them the product-limit estimate (Kaplan & Meier
1958)

    P(wait <= T) = 1 - prod_{j : d_j, x_j <= T} (1 - 1 / r_j),

``r_j`` the neighbours still at risk at ``x_j`` (those with ``x >= x_j``; a job censored at
the same time as a start counts as at risk, the usual convention). With every neighbour
started it is the share :func:`p_within` reads.
"""

from __future__ import annotations

import numpy as np

from predictor.core.wait.p_within import NEIGHBOURS, neighbours


def km_within(waited_s: np.ndarray, started: np.ndarray, within_s: float) -> float:
    """``P(wait <= within_s)`` from waits ``waited_s`` (n,), ``started`` (n,) bool (False: still
    waiting, censored at ``waited_s``): the Kaplan-Meier estimate (module docstring)."""
    x = np.asarray(waited_s, dtype=float)
    d = np.asarray(started, dtype=bool)
    if x.size == 0:
        raise ValueError("no jobs to estimate from")
    if d.all():  # nothing censored: the share, exactly (the product equals it but for rounding)
        return float(np.mean(x <= float(within_s)))
    order = np.lexsort((~d, x))  # by time, the starts before the censored at the same time
    x, d = x[order], d[order]
    at_risk = x.size - np.arange(x.size)
    hit = d & (x <= float(within_s))
    return float(1.0 - np.prod(1.0 - 1.0 / at_risk[hit]))


def p_within_censored(
    pred_s: np.ndarray,
    recent_pred_s: np.ndarray,
    recent_waited_s: np.ndarray,
    recent_started: np.ndarray,
    within_s: float,
    k: int = NEIGHBOURS,
) -> np.ndarray:
    """(n,) ``P(wait <= within_s)`` for each of ``pred_s``: :func:`km_within` over its ``k``
    nearest recent jobs (predictions ``recent_pred_s``, in arrival order), started or not."""
    near = neighbours(pred_s, recent_pred_s, k)
    waited = np.asarray(recent_waited_s, dtype=float)
    started = np.asarray(recent_started, dtype=bool)
    return np.array([km_within(waited[row], started[row], within_s) for row in near])
