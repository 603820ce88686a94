"""APQ distances between a target's state and its history jobs' states (docs/apq.md, "Distance").

Features are the 16 summaries of :mod:`predictor.core.state.sweep` (spec order). Per feature k:

- k = 0, requested processors: nominal, ``d = 0`` if equal else 1;
- k >= 1: ``d = |a - b| / (max - min)``, range over the history and the target (0 if flat);
- in *distributions* mode the six queue-wide summaries (k = 10..15) are replaced by the
  chi-square distances of the six histograms, each divided by its largest value over the
  history so it lies in [0, 1].

``D = sqrt(sum_k w_k d_k / sum_k w_k)`` with adaptive weights ``w_k = |Spearman rho|``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.core.state import histograms as hg
from predictor.core.wait.ranks import average_ranks

USER_FEATURES = slice(2, 10)  # spec features 3-10
QUEUE_FEATURES = slice(10, 16)  # spec features 11-16, paired with histograms 1-6


def spearman_weights(x: np.ndarray, wait: np.ndarray, user_keep: float) -> np.ndarray:
    """(16,) weights ``|rho_s(feature_k, wait)|`` over the history rows ``x`` (m, 16).

    NaN (a constant feature) counts as 0; all zero gives all ones. User features (3-10)
    keep only weights >= ``user_keep`` x the largest user weight (spec's pruning rule).
    """
    if len(wait) < 3:
        return np.ones(x.shape[1])
    ranks = average_ranks(x)
    ranks = ranks - ranks.mean(axis=0)
    wr = average_ranks(wait)
    wr = wr - wr.mean()
    denom = np.sqrt((ranks**2).sum(axis=0) * (wr**2).sum())
    rho = np.divide(ranks.T @ wr, denom, out=np.zeros(x.shape[1]), where=denom > 0)
    w = np.abs(np.nan_to_num(rho))
    user = w[USER_FEATURES]
    if user.max() > 0:
        w[USER_FEATURES] = np.where(user >= user_keep * user.max(), user, 0.0)
    return w if w.sum() > 0 else np.ones_like(w)


def feature_distances(
    target: np.ndarray,
    history: np.ndarray,
    h_min: np.ndarray | None = None,
    h_max: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """(m, 16) per-feature distances in [0, 1] between the target row and history rows.

    ``h_min``, ``h_max``: the history's column minima and maxima when already known (the
    candidates of one arrival share their history). ``out``: an (m, 16) array to write into
    (a reused scratch array: a fresh one costs more in page faults than the arithmetic).
    """
    h_min = history.min(axis=0) if h_min is None else h_min
    h_max = history.max(axis=0) if h_max is None else h_max
    lo = np.minimum(h_min, target)
    span = np.maximum(h_max, target) - lo
    live = span > 0
    # In place: one (m, 16) array instead of four (their page faults cost more than the math).
    d = np.subtract(history, target, out=out)
    np.abs(d, out=d)
    d /= np.where(live, span, 1.0)
    if not live.all():
        d[:, ~live] = 0.0
    d[:, 0] = history[:, 0] != target[0]
    return d


def normalise_columns(d: np.ndarray) -> np.ndarray:
    """(m, n) float: each column of ``d`` divided by its largest value; a column whose largest
    value is not above 0 (all 0, or a NaN in it) is all 0.

    The largest values are taken along the rows of ``d``'s transpose: the same values (a
    maximum does not depend on the order, and only a positive one is used), in a fifth of
    the time of ``d.max(axis=0)`` on a tall, narrow array (that loop runs once per row). The
    quotients are ``d / top`` as before; ``np.divide``'s ``where=`` cost twice the division.
    """
    top = np.ascontiguousarray(d.T).max(axis=1) if d.ndim == 2 else d.max(axis=0)
    live = top > 0
    out = np.asarray(np.divide(d, np.where(live, top, 1.0)), dtype=float)
    if not live.all():
        out[:, ~live] = 0.0
    return out


def hist_distances_fixed(target_hist: np.ndarray, history_hist: np.ndarray) -> np.ndarray:
    """(m, 6) normalised chi-square distances on the sweep's fixed bins."""
    return normalise_columns(hg.chi2_fixed(target_hist, history_hist).astype(float))


def hist_distances_kinds(
    target_hist: np.ndarray, history_kinds: np.ndarray, kinds: slice
) -> np.ndarray:
    """(m, n) the columns ``kinds`` (n of them) of :func:`hist_distances_fixed`, from the
    history's histograms of those kinds only, ``history_kinds`` (m, n, B): the same numbers
    (each column's distances and its normalisation are computed on their own)."""
    chi2 = hg.chi2_fixed(target_hist[kinds], history_kinds)
    return normalise_columns(chi2.astype(float))


def hist_distances_union(
    target_values: list[np.ndarray], sweep: Any, rows: np.ndarray, bins: int
) -> np.ndarray:
    """(m, 6) normalised chi-square distances, bins over the union of each pair's values."""
    a = sweep.arrays
    w_owner, w_mem = _gather(sweep.w_ptr, sweep.w_members, rows)
    r_owner, r_mem = _gather(sweep.r_ptr, sweep.r_members, rows)
    self_owner = np.arange(len(rows))
    w_owner_all = np.concatenate([w_owner, self_owner])
    t_w, t_r = a.submit[rows][w_owner], a.submit[rows][r_owner]
    w_sets = [
        np.concatenate([a.ert[w_mem], a.ert[rows]]),
        np.concatenate([a.procs[w_mem], a.procs[rows]]),
        np.concatenate([t_w - a.submit[w_mem], np.zeros(len(rows))]),
    ]
    r_sets = [a.ert[r_mem], a.procs[r_mem], t_r - a.start[r_mem]]
    m = len(rows)
    cols = [hg.chi2_union(target_values[k], w_sets[k], w_owner_all, m, bins) for k in range(3)]
    cols += [hg.chi2_union(target_values[3 + k], r_sets[k], r_owner, m, bins) for k in range(3)]
    return normalise_columns(np.column_stack(cols))


def _gather(
    ptr: np.ndarray, members: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(owner index into rows, member rows) of the CSR sets of ``rows``, vectorised."""
    sizes = ptr[rows + 1] - ptr[rows]
    owner = np.repeat(np.arange(len(rows)), sizes)
    offsets = np.repeat(ptr[rows] - (np.cumsum(sizes) - sizes), sizes)
    return owner, members[offsets + np.arange(len(owner))].astype(np.int64)


def combine(d: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(m,) overall distance ``sqrt(sum_k w_k d_k / sum_k w_k)``."""
    # np.maximum is what np.clip(x, 0.0, None) calls, without its per-call checks
    return np.sqrt(np.maximum(d @ w / w.sum(), 0.0))


def distribution_spread(hist_d: np.ndarray) -> float:
    """How distinct the histograms are: mean over the six of the std of normalised distances."""
    return float(hist_d.std(axis=0).mean()) if len(hist_d) else 0.0


def column_std(a: np.ndarray) -> np.ndarray:
    """``a.std(axis=0)`` of a tall, narrow (m, n) float array, to the bit, in about 40% of
    its time for n of 2 to 4 (73 against 180 us at 4,000 x 2 here).

    numpy reduces a C-ordered array of two or more columns along its first axis one row at a
    time, so each column's sum is the plain running sum ``s_i = s_(i-1) + a_i``;
    ``np.add.accumulate`` over a contiguous copy of the column makes the same sums without
    the per-row loop. The steps are numpy's ``_var``: ``mean = sum(a) / m``, then
    ``sqrt(sum((a - mean)^2) / m)``. Any other layout (one column alone is summed pairwise)
    is left to numpy; ``tests/core/test_apq_distance.py`` compares the two."""
    numpy_sums_rows = a.ndim == 2 and a.flags.c_contiguous and a.dtype == np.float64
    if not numpy_sums_rows or a.shape[0] == 0 or a.shape[1] < 2:
        return a.std(axis=0)
    run = np.empty(a.shape[0])
    return np.array([row_summed_std(a[:, j], run) for j in range(a.shape[1])])


def row_summed_std(column: np.ndarray, run: np.ndarray | None = None) -> np.float64:
    """The std of one float64 column as numpy takes it inside a C-ordered (m, n >= 2) array
    along its first axis (:func:`column_std`: running sums, not numpy's pairwise sum of a
    column alone), so one column of such an array can be redone on its own. ``run``: (m,)
    scratch."""
    m = column.shape[0]
    run = np.empty(m) if run is None else run
    col = column.copy()
    mean = np.add.accumulate(col, out=run)[-1] / m
    col -= mean
    col *= col
    return np.sqrt(np.add.accumulate(col, out=run)[-1] / m)


def spread_of(column_std: np.ndarray) -> float:
    """:func:`distribution_spread` from the six columns' std (in kind order), when they were
    taken apart: ``hist_d[:, a].std(axis=0)`` is ``hist_d.std(axis=0)[a]`` to the bit (numpy
    reduces a tall array along its first axis row by row, each column on its own;
    ``tests/core/test_apq_instant.py`` checks it)."""
    return float(column_std.mean())
