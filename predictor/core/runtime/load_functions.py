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
    labels = DBSCAN(eps=eps, min_samples=min_samples).fit(x).labels_
    best, best_key = -1, None
    for label in np.unique(labels[labels >= 0]):
        members = x[labels == label, 0]
        key = (-members.size, float(np.ptp(members)))
        if best_key is None or key < best_key:
            best, best_key = int(label), key
    return labels == best if best >= 0 else np.zeros(labels.size, dtype=bool)


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
