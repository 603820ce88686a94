"""(A,B)-Prod: an aggregator kept within a constant of a benchmark (``auto``'s meta-level).

Sani, Neu & Lazaric 2014, "Exploiting easy data in online optimization" (NeurIPS 27),
section 2, Figure 1. An algorithm ``A`` (here ``auto``'s AdaHedge mix with its fallback) and a
benchmark ``B`` (always-zero, or the safe expert) answer each round; the learner answers the
convex combination ``s_r a_r + (1 - s_r) b_r`` with ``s_r = w_r / (w_r + w_B)``, where ``B``'s
weight ``w_B`` never moves and ``A``'s is multiplied after each round by ``1 + eta delta_r``,
``delta_r = l_r(B) - l_r(A)`` (losses scaled into [-1, 1]).

**Guarantee** (their Theorem 1; the absolute error is convex, so the combination errs at most
the combination of the errors). With ``W_r = w_r + w_B``: ``W_{r+1} = W_r (1 + eta s_r
delta_r)``, so ``sum_r s_r delta_r >= ln(W_{R+1}) / eta >= ln(w_B) / eta`` and, for
``eta |delta| <= 1/2``, ``>= sum_r delta_r - eta sum_r delta_r^2 + ln(w_A) / eta``. In the
scaled losses, with ``w_A = w_B = 1/2`` and ``eta = 1/2``:

    L - L(B) <= 2 ln 2                       (never more than a constant worse than B)
    L - L(A) <= 2 ln 2 + sum_r delta_r^2 / 2

whatever the rounds' order or number: no horizon and no confidence level to choose (``eta =
1/2`` is the largest rate the bound allows, the one of smallest constant against ``B``).

**Scale.** Waits have no known range, so each round's difference is divided by the largest
``|l(B) - l(A)|`` seen so far, this round included (known once the round's jobs have started):
``delta`` stays in [-1, 1] and the bound holds in those units once the largest difference has
been seen, as AdaHedge's scale-free bound does (:mod:`predictor.core.wait.selection`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

ETA = 0.5
W_A = 0.5


def ab_prod_share(loss_a: np.ndarray, loss_b: np.ndarray, eta: float = ETA) -> np.ndarray:
    """``A``'s share ``s`` before each round and after the last, shape (R + 1,).

    loss_a, loss_b : (R,) the round losses of ``A`` and of the benchmark ``B`` (any scale).
    eta : the rate, in (0, 1/2] (module docstring).
    """
    if not 0.0 < eta <= 0.5:
        raise ValueError(f"eta must lie in (0, 1/2], got {eta}")
    diff = np.asarray(loss_b, dtype=float) - np.asarray(loss_a, dtype=float)
    scale = np.maximum.accumulate(np.abs(diff)) if diff.size else diff
    delta = np.divide(diff, scale, out=np.zeros_like(diff), where=scale > 0)
    log_w = np.log(W_A) + np.concatenate([[0.0], np.cumsum(np.log1p(eta * delta))])
    return expit(log_w - np.log(1.0 - W_A))


def round_losses(cum_err: np.ndarray, size: int) -> np.ndarray:
    """Mean error per complete round of ``size`` jobs from cumulative errors with a leading 0
    (shape (..., P + 1)): rounds are consecutive jobs in the order of ``cum_err``."""
    n = (cum_err.shape[-1] - 1) // size
    edges = cum_err[..., : n * size + 1 : size]
    return np.diff(edges, axis=-1) / size
