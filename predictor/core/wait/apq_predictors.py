"""APQ's three predictors and its fallback (docs/apq.md, "The three predictors"; the paper
"End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs" section on
"standard deviation minimizer, regression based and weighted average methods").

Each returns ``(wait_s, support)`` or None when it cannot answer, so the caller chains them.
"""

from __future__ import annotations

import numpy as np


def stddev_minimiser(
    d: np.ndarray, wait: np.ndarray, labels: np.ndarray, width: float, max_start: float
) -> tuple[float, int] | None:
    """Window of D with the least spread of waits, among the non-outlier points.

    Windows ``[s, s + width]`` start at every non-outlier distance ``s <= max_start``
    (from the smallest up); a window needs >= 2 jobs. Answer: the ``exp(-D^2)``-weighted
    mean wait of the window with the smallest standard deviation (first one on ties).
    """
    keep = labels >= 0
    d, wait = d[keep], wait[keep]
    order = np.argsort(d, kind="stable")
    d, wait = d[order], wait[order]
    starts = np.unique(d[d <= max_start])
    if len(starts) == 0:
        return None
    inside = (d[None, :] >= starts[:, None]) & (d[None, :] <= starts[:, None] + width)
    count = inside.sum(axis=1)
    mean = np.divide(inside @ wait, count, out=np.zeros(len(starts)), where=count > 0)
    var = (inside * (wait[None, :] - mean[:, None]) ** 2).sum(axis=1) / np.maximum(count, 1)
    var = np.where(count >= 2, var, np.inf)
    if not np.isfinite(var).any():
        return None
    best = int(np.argmin(var))
    members = inside[best]
    weight = np.exp(-(d[members] ** 2))
    return float(weight @ wait[members] / weight.sum()), int(members.sum())


def ridge_predict(x: np.ndarray, y: np.ndarray, x_new: np.ndarray, alpha: float) -> float:
    """Ridge regression with intercept (``sklearn.linear_model.Ridge`` closed form).

    ``beta = (Xc^T Xc + alpha I)^-1 Xc^T yc`` on centred data; a test checks it against
    scikit-learn. Solved directly because it runs once per prediction on <= 4000 x 16.
    """
    mu, y_mu = x.mean(axis=0), y.mean()
    xc = x - mu
    gram = xc.T @ xc + alpha * np.eye(x.shape[1])
    beta = np.linalg.solve(gram, xc.T @ (y - y_mu))
    return float(y_mu + (x_new - mu) @ beta)


def regression(
    d: np.ndarray,
    x: np.ndarray,
    x_target: np.ndarray,
    wait: np.ndarray,
    w: np.ndarray,
    radii: np.ndarray,
    jobs_per_feature: int,
    alpha: float,
) -> tuple[float, int] | None:
    """Ridge on the history jobs within a growing radius of D (spec predictor 2).

    The radius grows through ``radii`` until more than ``jobs_per_feature x n_features``
    jobs are inside (features = those with positive weight). Features are standardised
    over the jobs inside and scaled by their weights. Answer only if positive.
    """
    feat = w > 0
    need = jobs_per_feature * int(feat.sum())
    for radius in radii:
        inside = d <= radius + 1e-12
        if inside.sum() > need:
            break
    else:
        return None
    xs = x[inside][:, feat]
    sd = xs.std(axis=0)
    live = sd > 0
    if not live.any():
        return None
    mu = xs.mean(axis=0)
    scale = w[feat][live] / sd[live]
    z = (xs[:, live] - mu[live]) * scale
    z_new = (x_target[feat][live] - mu[live]) * scale
    pred = ridge_predict(z, wait[inside], z_new, alpha)
    return (pred, int(inside.sum())) if pred > 0 else None


def nearest_sorted(d: np.ndarray, top: int, known: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``top`` smallest of ``d`` in (D, index) order.

    ``known``: the indices of the ``len(known)`` smallest, already in that order, when the
    caller has them: their first ``top`` are the answer unless the ``top``-th and the next
    tie (then ``argpartition`` chooses among the tied, as it always did).
    """
    top = min(top, len(d))
    if known is not None and top < len(known) and d[known[top - 1]] != d[known[top]]:
        return known[:top]
    near = np.argpartition(d, top - 1)[:top] if top < len(d) else np.arange(len(d))
    return near[np.lexsort((near, d[near]))]


def weighted_average(
    d: np.ndarray, wait: np.ndarray, ks: tuple[int, ...], known: np.ndarray | None = None
) -> np.ndarray:
    """(len(ks),) ``exp(-D)``-weighted mean wait of the k nearest jobs, for each k.
    ``known``: see :func:`nearest_sorted`."""
    top = min(max(ks), len(d))
    near = nearest_sorted(d, top, known)
    weight = np.exp(-d[near])
    cum_wy, cum_w = np.cumsum(weight * wait[near]), np.cumsum(weight)
    idx = np.minimum(np.asarray(ks), top) - 1
    return cum_wy[idx] / cum_w[idx]


def size_class(procs: np.ndarray | float, edges: tuple[int, ...]) -> np.ndarray:
    """Processor class: 0 for 1-4, 1 for 5-16, 2 for 17-64, 3 for 65+ (default edges)."""
    return np.searchsorted(np.asarray(edges), procs, side="left")


def fallback_median(
    wait: np.ndarray, procs: np.ndarray, target_procs: float, edges: tuple[int, ...], recent: int
) -> tuple[float, int]:
    """Median wait of the ``recent`` latest history jobs of the target's size class.

    ``wait`` and ``procs`` are in start order (latest last). Without a job of that class,
    the median of the latest jobs of any size; with no history at all, 0 (support 0).
    """
    same = size_class(procs, edges) == size_class(target_procs, edges)
    pool = wait[same][-recent:] if same.any() else wait[-recent:]
    if len(pool) == 0:
        return 0.0, 0
    return float(np.median(pool)), len(pool)


def weighted_median(
    d: np.ndarray,
    wait: np.ndarray,
    ks: tuple[int, ...],
    known: np.ndarray | None = None,
    only: int | None = None,
) -> np.ndarray:
    """(len(ks),) ``exp(-D)``-weighted median wait of the k nearest jobs, for each k.

    Not in the spec: the measured alternative to regression + weighted average for targets
    without a good structure (AAE is minimised by a median, not a mean; docs/apq.md).
    ``known``: see :func:`nearest_sorted`. ``only``: the k wanted (a prediction once ``fit``
    chose it); the other entries are NaN, the wanted one as it is among all.
    """
    near = nearest_sorted(d, max(ks), known)  # the same nearest whatever k is wanted
    out = np.full(len(ks), np.nan)
    for pos, k in enumerate(ks):
        if only is not None and k != only:
            continue
        y, wt = wait[near[:k]], np.exp(-d[near[:k]])
        order = np.argsort(y, kind="stable")
        cum = np.cumsum(wt[order])
        out[pos] = y[order][np.searchsorted(cum, 0.5 * cum[-1])]
    return out
