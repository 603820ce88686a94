"""Load functions: how a tuple's runtime grows with the system load (the paper "End-to-End
Predictions-Based Resource Management Framework for Supercomputer Jobs", runtime).

On the tuning part: group jobs by the tuple <user, request size, queue, group>, keep the
``k`` most frequent tuples that have ``>= l`` jobs and a load span ``>= m``; per tuple put
the jobs into 20 load bins of width 0.05, keep the densest DBSCAN cluster of runtimes in each
bin and average it; find the longest chain of bins with increasing load and non-decreasing
runtime whose steps grow by at most X (longest path in a DAG); fit a line
``runtime = slope x load + intercept`` (``numpy.polyfit``, degree 1) to the chain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.cluster import DBSCAN

from predictor.core.runtime.params import RuntimeParams

TUPLE_COLUMNS = ("user_id", "size", "queue_id", "group_id")


def request_size(jobs: pd.DataFrame) -> np.ndarray:
    """Requested processors, else allocated ones (some logs leave the request at -1)."""
    req = jobs["requested_procs"].to_numpy(dtype=np.int64)
    alloc = jobs["allocated_procs"].to_numpy(dtype=np.int64)
    return np.where(req > 0, req, alloc)


def tuple_frame(jobs: pd.DataFrame) -> pd.DataFrame:
    """The four tuple columns (``size`` = :func:`request_size`), one row per job."""
    return pd.DataFrame(
        {
            "user_id": jobs["user_id"].to_numpy(dtype=np.int64),
            "size": request_size(jobs),
            "queue_id": jobs["queue_id"].to_numpy(dtype=np.int64),
            "group_id": jobs["group_id"].to_numpy(dtype=np.int64),
        }
    )


def tuple_codes(jobs: pd.DataFrame) -> np.ndarray:
    """One integer code per distinct tuple (same code = same tuple)."""
    return tuple_frame(jobs).groupby(list(TUPLE_COLUMNS), sort=False).ngroup().to_numpy()


@dataclass(frozen=True)
class LoadFunction:
    """``runtime(load) = slope x load + intercept`` learned for one tuple."""

    tuple_key: tuple[int, int, int, int]
    slope: float
    intercept: float
    chain_loads: tuple[float, ...]
    chain_runtimes: tuple[float, ...]
    n_jobs: int

    def __call__(self, load: np.ndarray | float) -> np.ndarray:
        return self.slope * np.asarray(load, dtype=float) + self.intercept


def longest_chain(loads: np.ndarray, runtimes: np.ndarray, max_step: float) -> np.ndarray:
    """Indices of the longest chain of points with increasing load, non-decreasing runtime
    and each step ``(r_y - r_x) / r_x <= max_step`` (seed: X = 50 %).

    Longest path in the DAG whose edge (x, y) exists when ``l_x < l_y``, ``r_x <= r_y`` and
    ``r_y - r_x <= X r_x``; dynamic programming over the points in load order, O(N^2).
    Ties keep the chain found first (lowest loads), so the answer is deterministic.
    Returns indices into the inputs, in increasing load.
    """
    loads = np.asarray(loads, dtype=float)
    runtimes = np.asarray(runtimes, dtype=float)
    n = loads.size
    if n == 0:
        return np.zeros(0, dtype=int)
    order = np.argsort(loads, kind="stable")
    lo, rt = loads[order], runtimes[order]
    edge = (
        (lo[:, None] < lo[None, :])
        & (rt[:, None] <= rt[None, :])
        & (rt[None, :] - rt[:, None] <= max_step * rt[:, None])
    )
    length = np.ones(n, dtype=int)
    parent = np.full(n, -1)
    for y in range(n):
        preds = np.flatnonzero(edge[:y, y])
        if preds.size:
            best = preds[np.argmax(length[preds])]
            length[y], parent[y] = length[best] + 1, best
    node, chain = int(np.argmax(length)), []
    while node >= 0:
        chain.append(node)
        node = int(parent[node])
    return order[np.array(chain[::-1])]


def densest_cluster(runtimes: np.ndarray, eps: float, min_samples: int) -> np.ndarray:
    """Boolean mask of the largest DBSCAN cluster of ``log(runtime)`` (ties: the tightest).

    DBSCAN runs on log runtimes so ``eps`` is a ratio (0.2 ~ 22 %). All-noise gives an
    empty mask.
    """
    x = np.log(np.maximum(runtimes, 1.0)).reshape(-1, 1)
    labels = dbscan_labels_1d(x[:, 0], eps, min_samples)
    if labels is None:  # a pair at distance eps (to rounding): sklearn's own arithmetic decides
        labels = DBSCAN(eps=eps, min_samples=min_samples).fit(x).labels_
    best, best_key = -1, None
    for label in np.unique(labels[labels >= 0]):
        members = x[labels == label, 0]
        key = (-members.size, float(np.ptp(members)))
        if best_key is None or key < best_key:
            best, best_key = int(label), key
    return labels == best if best >= 0 else np.zeros(labels.size, dtype=bool)


EPS_MARGIN = 1e-9  # pairs closer than this to eps are left to sklearn (rounding)


def dbscan_labels_1d(x: np.ndarray, eps: float, min_samples: int) -> np.ndarray | None:
    """The labels ``sklearn.cluster.DBSCAN(eps, min_samples).fit(x[:, None]).labels_`` gives,
    in O(n log n) on a line instead of sklearn's O(n^2) distances; None when some pair's
    distance is within ``EPS_MARGIN`` of ``eps`` (there rounding may decide, so the caller
    asks sklearn).

    On a line (Ester et al. 1996, DBSCAN): a point's neighbours (``|x_j - x_i| <= eps``,
    itself included) are a window of the sorted values; core points have at least
    ``min_samples``; consecutive core points (in sorted order) at most ``eps`` apart are one
    cluster, and a cluster never spans a larger gap. sklearn numbers the clusters in the order
    of their lowest-index core point and gives a border point (not core, within ``eps`` of a
    core) to the first cluster that reaches it: the lowest-numbered of the (at most two, the
    nearest core on each side) clusters within ``eps``. Noise is -1.
    """
    n = x.size
    order = np.argsort(x, kind="stable")
    xs = x[order]
    near_lo = np.searchsorted(xs, xs + (eps - EPS_MARGIN), side="left")
    near_hi = np.searchsorted(xs, xs + (eps + EPS_MARGIN), side="right")
    if (near_hi > near_lo).any():
        return None
    lo = np.searchsorted(xs, xs - eps, side="left")
    hi = np.searchsorted(xs, xs + eps, side="right")
    core = (hi - lo) >= min_samples
    labels_sorted = np.full(n, -1, dtype=np.int64)
    cores = np.flatnonzero(core)
    if cores.size == 0:
        return labels_sorted
    new_cluster = np.concatenate([[True], np.diff(xs[cores]) > eps])
    temp = np.cumsum(new_cluster) - 1
    first = np.flatnonzero(new_cluster)
    lowest_index = np.minimum.reduceat(order[cores], first)
    number = np.empty(first.size, dtype=np.int64)
    number[np.argsort(lowest_index, kind="stable")] = np.arange(first.size)
    label_of_core = number[temp]
    labels_sorted[cores] = label_of_core
    # border points: the nearest core at or before / at or after, if inside the window
    pos = np.arange(n)
    slot = np.cumsum(core) - 1  # index into ``cores`` of the last core at or before p
    prev_ok = (slot >= 0) & (cores[np.maximum(slot, 0)] >= lo)
    nxt = np.where(core, slot, np.minimum(slot + 1, cores.size - 1))
    next_ok = (cores[nxt] >= pos) & (cores[nxt] < hi)
    big = np.iinfo(np.int64).max
    left = np.where(prev_ok, label_of_core[np.maximum(slot, 0)], big)
    right = np.where(next_ok, label_of_core[nxt], big)
    border = ~core & (prev_ok | next_ok)
    labels_sorted[border] = np.minimum(left, right)[border]
    labels = np.empty(n, dtype=np.int64)
    labels[order] = labels_sorted
    return labels


def bin_averages(
    loads: np.ndarray, runtimes: np.ndarray, params: RuntimeParams
) -> tuple[np.ndarray, np.ndarray]:
    """Per load bin (width ``1 / n_load_bins``): mean load and mean runtime of the densest
    cluster. Bins without a cluster are left out. Returns ``(bin_loads, bin_runtimes)``."""
    bins = np.clip((loads * params.n_load_bins).astype(int), 0, params.n_load_bins - 1)
    out_l, out_r = [], []
    for b in np.unique(bins):
        inside = bins == b
        mask = densest_cluster(runtimes[inside], params.dbscan_eps, params.dbscan_min_samples)
        if mask.any():
            out_l.append(float(loads[inside][mask].mean()))
            out_r.append(float(runtimes[inside][mask].mean()))
    return np.array(out_l), np.array(out_r)


def fit_tuple_function(
    key: tuple[int, int, int, int], loads: np.ndarray, runtimes: np.ndarray, params: RuntimeParams
) -> LoadFunction | None:
    """The load function of one tuple, or None when the chain has fewer than 2 points."""
    bin_l, bin_r = bin_averages(loads, runtimes, params)
    chain = longest_chain(bin_l, bin_r, params.max_step)
    if chain.size < 2:
        return None
    slope, intercept = np.polyfit(bin_l[chain], bin_r[chain], 1)
    return LoadFunction(
        tuple_key=(int(key[0]), int(key[1]), int(key[2]), int(key[3])),
        slope=float(slope),
        intercept=float(intercept),
        chain_loads=tuple(float(v) for v in bin_l[chain]),
        chain_runtimes=tuple(float(v) for v in bin_r[chain]),
        n_jobs=int(loads.size),
    )


def fit_load_functions(
    jobs: pd.DataFrame, actual_loads: np.ndarray, params: RuntimeParams | None = None
) -> list[LoadFunction]:
    """Learn the load functions from (tuning) jobs and their actual loads.

    Only jobs with a positive runtime count. Among the ``n_tuples`` most frequent tuples, a
    tuple qualifies with ``>= min_tuple_jobs`` jobs and ``max - min`` load ``>= min_load_span``.
    """
    params = params or RuntimeParams()
    run = jobs["run_time"].to_numpy(dtype=float)
    keep = run > 0
    frame = tuple_frame(jobs)[keep].reset_index(drop=True)
    frame["load"] = np.clip(np.asarray(actual_loads, dtype=float)[keep], 0.0, 1.0)
    frame["run"] = run[keep]
    groups = frame.groupby(list(TUPLE_COLUMNS), sort=False)
    top = groups.size().sort_values(ascending=False, kind="stable").head(params.n_tuples)
    functions = []
    for key in top.index:
        sub = groups.get_group(key)
        span = float(sub["load"].max() - sub["load"].min())
        if len(sub) < params.min_tuple_jobs or span < params.min_load_span:
            continue
        fn = fit_tuple_function(key, sub["load"].to_numpy(), sub["run"].to_numpy(), params)
        if fn is not None:
            functions.append(fn)
    return functions
