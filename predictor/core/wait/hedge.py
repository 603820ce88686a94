"""AdaHedge and FlipFlop weights over rounds of experts' losses (``auto``'s weighting rule).

de Rooij, van Erven, Grunwald & Koolen 2014, "Follow the leader if you can, hedge if you
must", JMLR 15. Used by :mod:`predictor.core.wait.selection` (its docstring states the rule).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp


def _rounds(losses: np.ndarray, discount: float) -> tuple[np.ndarray, np.ndarray]:
    """The (R, m) loss matrix, checked, and the (R + 1, m) weight rows to fill."""
    if not 0.0 < discount <= 1.0:
        raise ValueError(f"discount must lie in (0, 1], got {discount}")
    loss = np.atleast_2d(np.asarray(losses, dtype=float))
    return loss, np.empty((loss.shape[0] + 1, loss.shape[1]))


def adahedge(losses: np.ndarray, discount: float = 1.0) -> np.ndarray:
    """AdaHedge weights before each round and after the last (module docstring).

    losses : (R, m) loss of each of m experts in each round (any scale, >= 0).
    discount : each round, the past losses and gap are multiplied by it first (1: plain
        AdaHedge; below 1 the weights follow a site that changes).
    Returns (R + 1, m): row ``r`` holds the weights given the first ``r`` rounds.
    """
    loss, out = _rounds(losses, discount)
    r_count, m = loss.shape
    cum = np.zeros(m)
    gap = 0.0
    for r in range(r_count + 1):
        w = _weights(cum, gap, m)
        out[r] = w
        if r == r_count:
            break
        lr = loss[r]
        h = float(w @ lr)
        if gap == 0.0:  # follow the leader: the mix loss is the leaders' best loss
            mix = float(lr[w > 0].min())
        else:
            eta = np.log(m) / gap
            shift = lr.min()
            mix = shift - np.log(float(w @ np.exp(-eta * (lr - shift)))) / eta
        gap = discount * gap + max(h - mix, 0.0)
        cum = discount * cum + lr
    return out


def flipflop(
    losses: np.ndarray, discount: float = 1.0, phi: float = 2.37, alpha: float = 1.243
) -> np.ndarray:
    """FlipFlop weights (de Rooij et al. 2014, section 3, "Follow the leader if you can, hedge
    if you must"): follow the leader while its cumulative mixability gap ``D_ftl`` stays under
    ``phi / alpha`` times AdaHedge's ``D_ah``, else AdaHedge (``eta = ln(m) / D_ah``) until
    ``D_ah`` exceeds ``alpha D_ftl``. Each regime adds its own rounds' gaps; FTL's mix loss is
    ``min_c (L_c + l_c) - min_c L_c``. The regret is within a constant factor of both FTL's
    and AdaHedge's (``phi``, ``alpha``: the paper's constants), so a site whose best expert
    stays best is followed, not averaged. ``discount`` as in :func:`adahedge`.

    Returns (R + 1, m) as :func:`adahedge`.
    """
    loss, out = _rounds(losses, discount)
    r_count, m = loss.shape
    cum = np.zeros(m)
    gaps = {"ftl": 0.0, "ah": 0.0}
    regime = "ftl"
    for r in range(r_count + 1):
        gap = 0.0 if regime == "ftl" else gaps["ah"]
        w = _weights(cum, gap, m)
        out[r] = w
        if r == r_count:
            break
        lr = loss[r]
        if gap == 0.0:  # eta = inf: the mix loss is the rise of the best cumulative loss
            mix = float((cum + lr).min() - cum.min())
        else:
            eta = np.log(m) / gap
            with np.errstate(divide="ignore"):  # log 0 = -inf for an expert of weight 0
                mix = -float(logsumexp(np.log(w) - eta * lr)) / eta
        gaps = {k: discount * v for k, v in gaps.items()}
        gaps[regime] += max(float(w @ lr) - mix, 0.0)
        cum = discount * cum + lr
        if regime == "ftl" and gaps["ftl"] > phi / alpha * gaps["ah"]:
            regime = "ah"
        elif regime == "ah" and gaps["ah"] > alpha * gaps["ftl"]:
            regime = "ftl"
    return out


WEIGHT_RULES = {"adahedge": adahedge, "flipflop": flipflop}


def _weights(cum: np.ndarray, gap: float, m: int) -> np.ndarray:
    if gap == 0.0 or m == 1:
        w = (cum == cum.min()).astype(float)
    else:
        w = np.exp(-np.log(m) / gap * (cum - cum.min()))
    return w / w.sum()
