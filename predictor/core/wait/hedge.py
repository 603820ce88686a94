"""AdaHedge, FlipFlop, Fixed-Share and ML-Poly weights over rounds of experts' losses
(``auto``'s rule).

de Rooij, van Erven, Grunwald & Koolen 2014, "Follow the leader if you can, hedge if you
must", JMLR 15; Fixed-Share: Herbster & Warmuth 1998, "Tracking the best expert", Machine
Learning 32. Used by :mod:`predictor.core.wait.selection` (its docstring states the rule).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp


def check_discount(discount: float) -> None:
    """Refuse a discount outside (0, 1]."""
    if not 0.0 < discount <= 1.0:
        raise ValueError(f"discount must lie in (0, 1], got {discount}")


def _rounds(losses: np.ndarray, discount: float) -> tuple[np.ndarray, np.ndarray]:
    """The (R, m) loss matrix, checked, and the (R + 1, m) weight rows to fill."""
    check_discount(discount)
    loss = np.atleast_2d(np.asarray(losses, dtype=float))
    return loss, np.empty((loss.shape[0] + 1, loss.shape[1]))


def adahedge(losses: np.ndarray, discount: float = 1.0) -> np.ndarray:
    """AdaHedge weights before each round and after the last (module docstring).

    losses : (R, m) loss of each of m experts in each round (any scale, >= 0).
    discount : each round, the past losses and gap are multiplied by it first (1: plain
        AdaHedge; below 1 the weights follow a site that changes).
    Returns (R + 1, m): row ``r`` holds the weights given the first ``r`` rounds.
    """
    return adahedge_states(losses, discount)[0]


def adahedge_states(
    losses: np.ndarray, discount: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`adahedge`'s weights (R + 1, m) with the state each row was computed from: the
    (discounted) cumulative losses ``L`` (R + 1, m) and mixability gap ``D`` (R + 1,), so
    that row ``r`` of the weights is ``weights_given(L[r], D[r])``."""
    loss, _ = _rounds(losses, discount)
    return adahedge_run(loss.shape[1], loss.shape[0], lambda r, w: loss[r], discount)


def adahedge_run(
    m: int, r_count: int, loss_of: Callable[[int, np.ndarray], np.ndarray], discount: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AdaHedge over ``r_count`` rounds of ``m`` experts, round ``r``'s losses being
    ``loss_of(r, w)`` under the weights ``w`` in force: the weights (R + 1, m), cumulative
    losses (R + 1, m) and gaps (R + 1,) as :func:`adahedge_states`."""
    out, cums, gaps = np.empty((r_count + 1, m)), np.empty((r_count + 1, m)), np.empty(r_count + 1)
    cum = np.zeros(m)
    gap = 0.0
    for r in range(r_count + 1):
        w = adahedge_weights(cum, gap, m)
        out[r], cums[r], gaps[r] = w, cum, gap
        if r == r_count:
            break
        cum, gap = adahedge_step(cum, gap, w, loss_of(r, w), discount)
    return out, cums, gaps


def adahedge_step(
    cum: np.ndarray, gap: float, w: np.ndarray, lr: np.ndarray, discount: float
) -> tuple[np.ndarray, float]:
    """AdaHedge's state after a round of losses ``lr`` under weights ``w``: the discounted
    cumulative losses plus ``lr``, and the discounted gap plus the round's mixability gap
    ``w . l - mix``, ``mix = -ln(sum_c w_c exp(-eta l_c)) / eta`` (the leaders' best loss
    while the gap is 0)."""
    m = lr.size
    h = float(w @ lr)
    if gap == 0.0:  # follow the leader: the mix loss is the leaders' best loss
        mix = float(lr[w > 0].min())
    else:
        eta = np.log(m) / gap
        shift = lr.min()
        mix = shift - np.log(float(w @ np.exp(-eta * (lr - shift)))) / eta
    return discount * cum + lr, discount * gap + max(h - mix, 0.0)


def weights_given(cum: np.ndarray, gap: np.ndarray) -> np.ndarray:
    """AdaHedge's weights (J, m) for J states: cumulative losses (J, m), gaps (J,); row j
    equals ``adahedge_weights(cum[j], gap[j], m)`` element for element (uniform over the leaders
    where the gap is 0, else ``exp(-ln(m) / D (L - min L))`` normalised)."""
    cum = np.atleast_2d(np.asarray(cum, dtype=float))
    gap = np.asarray(gap, dtype=float)
    m = cum.shape[1]
    lead = cum - cum.min(axis=1, keepdims=True)
    flat = (gap == 0.0) | (m == 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(
            flat[:, None],
            (lead == 0.0).astype(float),
            np.exp(-np.log(m) / np.where(flat, 1.0, gap)[:, None] * lead),
        )
    return w / w.sum(axis=1, keepdims=True)


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
        w = adahedge_weights(cum, gap, m)
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


def fixed_share(
    losses: np.ndarray, discount: float = 1.0, share: float | None = None
) -> np.ndarray:
    """Fixed-Share weights with AdaHedge's learning rate: they track a best expert that changes.

    Herbster & Warmuth 1998 ("Tracking the best expert", section 3, Fixed-Share): after the
    exponential update ``v_c = w_c exp(-eta l_c) / sum_k w_k exp(-eta l_k)`` each expert gets
    back a share of the total, ``w'_c = (1 - a) v_c + a / m``, so no weight falls below
    ``a / m`` and an expert that becomes best regains the lead within about
    ``ln(m / a) / (eta (l_old - l_new))`` rounds, whatever its past. The rate ``eta = ln(m) / D``
    comes from the cumulative mixability gap ``D`` of these very weights (de Rooij et al.
    2014, AdaHedge; ``D += w.l + ln(sum_c w_c exp(-eta l_c)) / eta``, multiplied by
    ``discount`` before each round), so the losses' scale cancels; while ``D = 0`` the update
    keeps the round's leaders among the weighted experts (``eta`` infinite).

    share : ``a``; None gives ``a_r = 1 / (r + 1)`` after round ``r`` (1, 2, ...), the
        decreasing share needing no horizon (Cesa-Bianchi, Gaillard, Lugosi & Stoltz 2012,
        "Mirror descent meets fixed share (and feels no regret)", NeurIPS 25). For a fixed
        ``eta`` the mix loss exceeds that of any sequence of experts switching ``k`` times in
        ``R`` rounds by at most ``-ln P / eta``, ``P`` the prior the shares give the sequence:
        ``P >= (1/m) prod_r (1 - a_r) prod_switches (a_r / m)``, and ``prod_{r<R} r/(r+1) =
        1/R``, so the excess is at most ``(k + 1)(ln m + ln R) / eta``.
    Returns (R + 1, m) as :func:`adahedge`.
    """
    loss, out = _rounds(losses, discount)
    if share is not None and not 0.0 <= share <= 1.0:
        raise ValueError(f"share must lie in [0, 1], got {share}")
    r_count, m = loss.shape
    w = np.full(m, 1.0 / m)
    gap = 0.0
    for r in range(r_count + 1):
        out[r] = w
        if r == r_count:
            break
        lr = loss[r]
        if gap == 0.0:  # eta infinite: the leaders among the weighted experts keep the weight
            on = w > 0
            best = (lr == lr[on].min()) & on
            v, mix = w * best, float(lr[on].min())
        else:
            eta = np.log(m) / gap
            with np.errstate(divide="ignore"):  # log 0 = -inf for an expert of weight 0
                log_v = np.log(w) - eta * (lr - lr.min())
            top = float(log_v.max())  # log-sum-exp by hand: scipy's costs 10x on 6 experts
            v = np.exp(log_v - top)
            total = float(v.sum())
            mix = float(lr.min()) - (top + np.log(total)) / eta
        gap = discount * gap + max(float(w @ lr) - mix, 0.0)
        a = 1.0 / (r + 2) if share is None else share
        w = (1.0 - a) * v / v.sum() + a / m
    return out


def fixed_share_memory(losses: np.ndarray, discount: float = 1.0) -> np.ndarray:
    """:func:`fixed_share` with the share ``a = 1 - discount`` (= ``round_size / memory``):
    one switch expected per memory, the length the discounted rules already forget over."""
    return fixed_share(losses, discount, share=1.0 - discount)


def ml_poly_weights(regret: np.ndarray, inv_eta: np.ndarray) -> np.ndarray:
    """ML-Poly's weights ``eta_c max(R_c, 0)`` normalised; uniform while no ``R_c`` > 0."""
    pos = np.maximum(regret, 0.0)
    live = pos > 0.0
    if not live.any():
        return np.full(regret.size, 1.0 / regret.size)
    v = np.zeros(regret.size)
    v[live] = pos[live] / inv_eta[live]  # R_c > 0 needs some r_c != 0, so 1 / eta_c > 0
    return v / v.sum()


def ml_poly(losses: np.ndarray, discount: float = 1.0) -> np.ndarray:
    """ML-Poly weights (Gaillard, Stoltz & van Erven 2014, "A second-order bound with
    excess losses", COLT; the R package opera's ``MLpol``): one learning rate per expert.
    With the mix's round loss ``w . l``, each expert's regret ``r_c = w . l - l_c``,
    cumulated ``R_c``: ``w_c ~ eta_c max(R_c, 0)``, ``1 / eta_c = sum_r r_c^2 +
    max_{r,k} r_k^2``, uniform while no ``R_c`` is positive. The regret against expert ``c``
    grows as ``sqrt(sum_r r_c^2)`` (second order: small when its losses stay close to the
    mix's); no learning rate to tune, and the losses' scale cancels. ``discount`` multiplies
    ``R`` and the sums of squares before each round as in :func:`adahedge` (the largest
    square is kept). Returns (R + 1, m) as :func:`adahedge`."""
    loss, _ = _rounds(losses, discount)
    return ml_poly_run(loss.shape[1], loss.shape[0], lambda r, w: loss[r], discount)


def ml_poly_run(
    m: int, r_count: int, loss_of: Callable[[int, np.ndarray], np.ndarray], discount: float
) -> np.ndarray:
    """ML-Poly's weights (R + 1, m) over ``r_count`` rounds, round ``r``'s losses being
    ``loss_of(r, w)`` under the weights ``w`` in force."""
    out = np.empty((r_count + 1, m))
    state = MLPolyState(m)
    for r in range(r_count + 1):
        out[r] = w = state.weights()
        if r < r_count:
            state.update(w, loss_of(r, w), discount)
    return out


class MLPolyState:
    """ML-Poly's state: cumulative regrets, sums of squared regrets, the largest square."""

    def __init__(self, m: int) -> None:
        self.regret, self.squares, self.top = np.zeros(m), np.zeros(m), 0.0

    def weights(self) -> np.ndarray:
        return ml_poly_weights(self.regret, self.squares + self.top)

    def update(self, w: np.ndarray, loss: np.ndarray, discount: float) -> None:
        r = float(w @ loss) - loss
        self.top = max(self.top, float((r * r).max()))
        self.regret = discount * self.regret + r
        self.squares = discount * self.squares + r * r


WEIGHT_RULES = {
    "adahedge": adahedge,
    "flipflop": flipflop,
    "fixedshare": fixed_share,
    "fixedshare_mem": fixed_share_memory,
    "mlpoly": ml_poly,
}


def adahedge_weights(cum: np.ndarray, gap: float, m: int) -> np.ndarray:
    """AdaHedge's weights given cumulative losses ``cum`` and gap ``gap`` (uniform over the
    leaders while the gap is 0, else ``exp(-ln(m) / D (L - min L))`` normalised)."""
    if gap == 0.0 or m == 1:
        w = (cum == cum.min()).astype(float)
    else:
        w = np.exp(-np.log(m) / gap * (cum - cum.min()))
    return w / w.sum()
