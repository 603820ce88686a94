"""AdaHedge over the experts *and* their linearised mix (``rule="adahedge_stacked"``).

AdaHedge on the experts' losses (:func:`predictor.core.wait.hedge.adahedge`) competes with the
best single expert; AdaHedge on the linearised losses
(:mod:`predictor.core.wait.hedge_gradient`) competes with the best fixed mix, but on a log where
no mix beats the best expert it pays the wider comparator's regret for nothing (the tenth pass,
docs/results.md: 0.95 of the plain rule's error on four real logs, 1.02 on a synthetic one).
Stacking takes both (the usual way to combine two online rules, Cesa-Bianchi & Lugosi 2006,
"Prediction, Learning, and Games", section 2.1 on combining forecasters: a forecaster over
forecasters): the linearised mix ``g_r . p`` (``g_r`` the gradient rule's weights in force in
round ``r``) joins the ``m`` experts as expert ``m + 1``, and AdaHedge weighs the ``m + 1`` by
their round losses (mean absolute errors). Its regret against the best of the ``m + 1``, hence
against both rules' comparators, grows as ``sqrt(L* ln(m + 1))``.

The answer is a mix of the experts again: weights ``v`` over the ``m + 1`` fold into
``w = v_{1..m} + v_{m+1} g_r`` over the ``m`` (:func:`fold`), so everything that reads a mix's
weights (the fallback, the guard, which experts an answer reads) works unchanged.

``pred`` (m, R, size) and ``wait`` (R, size) as in :mod:`~predictor.core.wait.hedge_gradient`.
"""

from __future__ import annotations

import numpy as np

from predictor.core.wait.hedge import adahedge_states
from predictor.core.wait.hedge_gradient import adahedge_gradient


def stacked_losses(
    pred: np.ndarray, wait: np.ndarray, discount: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """(R, m + 1) the round losses of the experts and of the linearised mix at the weights in
    force, with the gradient rule's weights (R + 1, m) (row ``r``: given ``r`` rounds)."""
    pred, wait = np.asarray(pred, dtype=float), np.asarray(wait, dtype=float)
    grad = adahedge_gradient(pred, wait, discount)
    r_count = wait.shape[0]
    mix = np.einsum("rm,mrj->rj", grad[:r_count], pred)
    singles = np.abs(pred - wait).mean(axis=2).T
    return np.c_[singles, np.abs(mix - wait).mean(axis=1)], grad


def fold(weights: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """(J, m) the experts' weights of a mix weighting them by ``weights[:, :m]`` and the
    linearised mix, whose weights are ``grad`` (J, m), by ``weights[:, m]``."""
    m = grad.shape[1]
    return weights[:, :m] + weights[:, m:] * grad


def adahedge_stacked_states(
    pred: np.ndarray, wait: np.ndarray, discount: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """AdaHedge over the ``m + 1``: its weights (R + 1, m + 1), cumulative losses
    (R + 1, m + 1) and gaps (R + 1,) (:func:`~predictor.core.wait.hedge.adahedge_states`), and
    the gradient rule's weights (R + 1, m) that :func:`fold` them."""
    losses, grad = stacked_losses(pred, wait, discount)
    weights, cum, gap = adahedge_states(losses, discount)
    return weights, cum, gap, grad


def adahedge_stacked(pred: np.ndarray, wait: np.ndarray, discount: float = 1.0) -> np.ndarray:
    """(R + 1, m) the folded weights given each number of rounds (module docstring)."""
    weights, _, _, grad = adahedge_stacked_states(pred, wait, discount)
    return fold(weights, grad)


#: the stacked rules, by the name ``HedgeSelector(rule=...)`` takes
STACKED_RULES = {"adahedge_stacked": adahedge_stacked}
