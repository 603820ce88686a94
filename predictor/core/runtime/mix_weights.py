"""Density's mixture weights fitted by maximum likelihood on the tuning part (EM).

:class:`~predictor.core.runtime.density.DensityRangeSet` mixes three runtime densities per
job (``f = a f_1 + b f_2 + c f_3``: the boxes around past runtimes, the same past jobs'
used share of their requested time, the quantile GBM's log-normal; module docstring of
:mod:`predictor.core.runtime.density`). The seed's rangeSets and the global level ``lam``
spend length where the density is highest, which is the shortest set for a given success
only if ``f`` is the runtimes' density. With ``fit_weights`` the weights are the ones under
which the dev jobs' actual runtimes are most likely:

``max_w sum_j log(sum_k w_k f_jk(r_j))``, ``w_k >= 0``, ``sum_k w_k = 1``,

``f_jk`` component k's density (per second) of dev job j at its actual runtime ``r_j`` (0
where the component is missing or does not reach ``r_j``). The log-likelihood is concave in
``w``; EM (Dempster, Laird & Rubin 1977; for mixture weights alone, each step is
``w_k <- mean_j w_k f_jk / sum_l w_l f_jl``) increases it at every step and converges to
the maximum. Jobs that no component reaches (``f_j = 0`` whatever ``w``) do not depend on
``w`` and are left out.
"""

from __future__ import annotations

import numpy as np

from predictor.core.runtime.combined import Pieces


def density_at(pc: Pieces, r_s: float) -> float:
    """``pc``'s density per second at ``r_s`` (0 outside its pieces)."""
    if pc.m.size == 0:
        return 0.0
    k = int(np.searchsorted(pc.x, r_s, side="right")) - 1
    if k < 0 or k >= pc.m.size:
        return 0.0
    return float(pc.m[k] / max(pc.x[k + 1] - pc.x[k], 1e-12))


def em_weights(
    dens: np.ndarray, start: np.ndarray, iters: int = 1000, tol: float = 1e-12
) -> np.ndarray:
    """Mixture weights maximising ``sum_j log(dens[j] @ w)`` over the simplex (module
    docstring). ``dens`` (n, K) >= 0; ``start`` (K,) positive where a component may get
    weight (a 0 stays 0). Returns ``start`` normalised when no row has a positive density."""
    f = np.asarray(dens, dtype=float)
    w = np.asarray(start, dtype=float)
    w = w / w.sum()
    f = f[(f @ (w > 0)) > 0]  # rows some allowed component reaches
    if not f.size:
        return w
    for _ in range(iters):
        total = f @ w
        new = w * (f / total[:, None]).mean(axis=0)
        new = new / new.sum()
        if np.max(np.abs(new - w)) < tol:
            return new
        w = new
    return w
