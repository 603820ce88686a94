"""Weights on linearised losses (the gradient trick) for ``auto``'s mix: AdaHedge and ML-Poly
(:mod:`predictor.core.wait.hedge`) fed the tangent of the mix's error instead of its error.

**The gradient trick** (Cesa-Bianchi & Lugosi 2006, "Prediction, Learning, and Games", section
2.5; opera's ``loss.gradient``). The mix answers ``w . p``. Its absolute error is convex in
``w``, so it lies above its tangent at the weights in force: ``|w . p - y| >= s (w . p - y)``
with ``s = sign(w_r . p - y)``, equal at ``w_r``. Each expert's loss in round ``r`` is then
the tangent's coefficient, ``l~_c = mean_j s_j (p_cj - y_j)`` over the round's jobs, and the
mix's is ``w_r . l~ = mean_j |w_r . p_j - y_j|``, its actual round loss. A rule on these
losses competes with the best fixed *mix* of the experts, not only the best single expert: two
experts erring on opposite sides of the truth both gain weight. The mix linearised is the
uncapped ``w_r . p``: ``auto`` caps its answers at the longest known wait
(:mod:`predictor.core.wait.selection`), which the tangent leaves out.

``pred`` (m, R, size): the experts' predictions on each round's jobs; ``wait`` (R, size): the
jobs' actual waits. Each function returns (R + 1, m) as ``adahedge``: row ``r`` holds the
weights given the first ``r`` rounds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from predictor.core.wait.hedge import adahedge_run, check_discount, ml_poly_run


def linearised_losses(w: np.ndarray, pred: np.ndarray, wait: np.ndarray) -> np.ndarray:
    """(m,) ``l~_c = mean_j s_j (p_cj - y_j)``, ``s_j = sign(w . p_j - y_j)`` (module
    docstring); ``pred`` (m, size), ``wait`` (size,)."""
    s = np.sign(w @ pred - wait)
    return (pred - wait) @ s / wait.size


def ml_poly_gradient(pred: np.ndarray, wait: np.ndarray, discount: float = 1.0) -> np.ndarray:
    """ML-Poly (:func:`predictor.core.wait.hedge.ml_poly`) on the linearised losses."""
    pred, wait = _rounds(pred, wait, discount)
    return ml_poly_run(pred.shape[0], pred.shape[1], _linearised(pred, wait), discount)


def adahedge_gradient(pred: np.ndarray, wait: np.ndarray, discount: float = 1.0) -> np.ndarray:
    """AdaHedge (:func:`predictor.core.wait.hedge.adahedge`) on the linearised losses."""
    return adahedge_gradient_states(pred, wait, discount)[0]


def adahedge_gradient_states(
    pred: np.ndarray, wait: np.ndarray, discount: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`adahedge_gradient`'s weights (R + 1, m) with the cumulative linearised losses
    ``L`` (R + 1, m) and gaps ``D`` (R + 1,) each row was computed from, as
    :func:`predictor.core.wait.hedge.adahedge_states` (row ``r`` is
    ``weights_given(L[r], D[r])``)."""
    pred, wait = _rounds(pred, wait, discount)
    return adahedge_run(pred.shape[0], pred.shape[1], _linearised(pred, wait), discount)


#: the rules on linearised losses, by the name ``HedgeSelector(rule=...)`` takes
GRADIENT_RULES = {"adahedge_grad": adahedge_gradient, "mlpoly_grad": ml_poly_gradient}


def _linearised(pred: np.ndarray, wait: np.ndarray) -> Callable[[int, np.ndarray], np.ndarray]:
    """Round ``r``'s linearised losses under the weights ``w`` in force."""
    return lambda r, w: linearised_losses(w, pred[:, r], wait[r])


def _rounds(pred: np.ndarray, wait: np.ndarray, discount: float) -> tuple[np.ndarray, np.ndarray]:
    check_discount(discount)
    pred, wait = np.asarray(pred, dtype=float), np.asarray(wait, dtype=float)
    if pred.ndim != 3 or wait.shape != pred.shape[1:]:
        raise ValueError(f"pred must be (m, R, size) and wait (R, size), got {pred.shape}, "
                         f"{wait.shape}")  # fmt: skip
    return pred, wait
