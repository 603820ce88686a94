"""APQ for a batch of targets that share one history block (a molding arrival's candidate
sizes): the distances, the nearest points and the structure check in one numpy pass each,
instead of one pass per target (docs/apq.md; the speed notes in docs/results.md, "Speed").

Every function gives, per target, exactly the numbers of the one-target code
(:func:`predictor.core.wait.apq_distance.feature_distances`, the ``argpartition`` of
:meth:`predictor.core.wait.apq.APQ._answer`,
:func:`predictor.core.wait.apq_structure.check_structure`): the element-wise operations are
the same ones, the dot products and means stay per target (their summation order is BLAS's and
numpy's, which a stacked call could change), and ``tests/core/test_apq_batch.py`` checks the
equality bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from predictor.core.state import histograms as hg
from predictor.core.wait import apq_distance as dist

if TYPE_CHECKING:  # apq imports this module
    from predictor.core.wait.apq import APQ, Answer, _Out
    from predictor.core.wait.apq_index import HistoryIndex
    from predictor.core.wait.targets import WaitTargets


def combined_distances(
    targets: np.ndarray,
    history: np.ndarray,
    h_min: np.ndarray,
    h_max: np.ndarray,
    w: np.ndarray,
    scratch: tuple[np.ndarray, np.ndarray] | None = None,
    queue_cols: list[np.ndarray | None] | None = None,
) -> np.ndarray:
    """(K, m) overall distances ``D`` of K targets (K, 16) to one history (m, 16).

    Row k equals ``combine(feature_distances(targets[k], history, h_min, h_max), w)``
    (:mod:`predictor.core.wait.apq_distance`). The candidate sizes of one arrival differ in
    a few features only (the size and the sums it enters), so target 0's (m, 16) matrix is
    computed whole and each other target writes over it only the columns in which some
    target's value or range differs from target 0's (a column where target k agrees with
    target 0 is written with the same floats, computed by the same operations). Those
    columns are computed as rows of the history's transpose, contiguous, and written in
    one assignment: the matrix combined is target k's, element for element, without
    copying it whole or putting target 0's columns back. ``scratch``: (m, 16) arrays to
    reuse, the first is written (one matrix at a time stays in cache; a (K, m, 16) block
    would not). ``queue_cols``: per target, the (m, 6) histogram distances that replace
    features 11-16 (distributions mode, on a copy as the one-target code does), or None
    (summaries).
    """
    queue_cols = queue_cols if queue_cols is not None else [None] * len(targets)
    first = scratch[0] if scratch is not None else np.empty_like(history)
    lo = np.minimum(h_min, targets)
    span = np.maximum(h_max, targets) - lo
    live = span > 0
    d = dist.feature_distances(targets[0], history, h_min, h_max, out=first)
    out = np.empty((len(targets), len(history)))
    out[0] = _combine(d, w, queue_cols[0])
    if len(targets) == 1:
        return out
    differ = ((targets[1:] != targets[0]) | (span[1:] != span[0])).any(axis=0)
    cols = np.flatnonzero(differ[1:]) + 1  # feature 0 (nominal) is redone for every target
    history_t = np.ascontiguousarray(history[:, cols].T)
    part = np.empty((len(cols), len(history)))
    for k in range(1, len(targets)):
        np.subtract(history_t, targets[k, cols, None], out=part)
        np.abs(part, out=part)
        part /= np.where(live[k, cols], span[k, cols], 1.0)[:, None]
        part[~live[k, cols]] = 0.0
        d[:, cols] = part.T
        d[:, 0] = history[:, 0] != targets[k, 0]
        out[k] = _combine(d, w, queue_cols[k])
    return out


def _combine(d: np.ndarray, w: np.ndarray, queue: np.ndarray | None) -> np.ndarray:
    if queue is None:
        return dist.combine(d, w)
    d_mode = d.copy()
    d_mode[:, dist.QUEUE_FEATURES] = queue
    return dist.combine(d_mode, w)


def changed_kinds(target_hist: np.ndarray, k: int) -> list[int]:
    """The histogram kinds (of the six) in which target ``k``'s histograms differ from
    target 0's: a candidate size's own kinds."""
    return [int(j) for j in np.flatnonzero((target_hist[k] != target_hist[0]).any(axis=1))]


def hist_distances_batch(target_hist: np.ndarray, history_hist: np.ndarray) -> list[np.ndarray]:
    """:func:`predictor.core.wait.apq_distance.hist_distances_fixed` of K targets' histograms
    (K, 6, B) to one history's (m, 6, B), as K (m, 6) arrays. A histogram that equals target
    0's (every kind but the size for candidate sizes) reuses its column (each column is
    computed and normalised on its own: the same numbers). A kind some target changes is
    copied out of the history's histograms once, contiguous, for all of them (the same
    element-wise operations; a chi-square over the strided kind cost half as much again)."""
    first = dist.hist_distances_fixed(target_hist[0], history_hist)
    out = [first]
    kinds: dict[int, np.ndarray] = {}
    for k in range(1, len(target_hist)):
        h = first.copy()
        for j in changed_kinds(target_hist, k):
            if j not in kinds:
                kinds[j] = np.ascontiguousarray(history_hist[:, j : j + 1, :])
            col = hg.chi2_fixed(target_hist[k, j : j + 1], kinds[j])
            h[:, j] = dist.normalise_columns(col.astype(float))[:, 0]
        out.append(h)
    return out


def spreads_batch(target_hist: np.ndarray, hds: list[np.ndarray]) -> list[float]:
    """:func:`predictor.core.wait.apq_distance.distribution_spread` of each of
    :func:`hist_distances_batch`'s arrays. The spread is the mean of the six columns' std, and
    numpy takes each column's std of a C-ordered (m, 6) array on its own (running sums row
    by row), so target k keeps target 0's std for every kind whose histogram equals target
    0's and redoes only the others (``apq_distance.row_summed_std``): the same numbers, one
    column a candidate size instead of six."""
    first = hds[0]
    if not len(first) or first.dtype != np.float64 or not first.flags.c_contiguous:
        return [dist.distribution_spread(hd) for hd in hds]
    std0 = first.std(axis=0)
    out = [float(std0.mean())]
    run = np.empty(len(first))
    for k in range(1, len(hds)):
        std = std0.copy()
        for j in changed_kinds(target_hist, k):
            std[j] = dist.row_summed_std(hds[k][:, j], run)
        out.append(float(std.mean()))
    return out


def nearest_batch(dd: np.ndarray, n: int) -> np.ndarray:
    """(K, n) indices of the ``n`` smallest of each row of ``dd`` (K, m), as
    ``np.argpartition(dd[k], n - 1)[:n]`` (the same selection, row by row)."""
    if n >= dd.shape[1]:
        return np.broadcast_to(np.arange(dd.shape[1]), (dd.shape[0], dd.shape[1])).copy()
    return np.argpartition(dd, n - 1, axis=1)[:, :n]


@dataclass(frozen=True)
class StructureBatch:
    """The structure check of K targets: ``outlier`` (K, p) True for DBSCAN noise, ``good``
    (K,) the verdict (:func:`predictor.core.wait.apq_structure.check_structure`'s rule)."""

    outlier: np.ndarray
    good: np.ndarray


def components_batch(adjacency: np.ndarray) -> np.ndarray:
    """(K, p) connected-component labels (the smallest index of each component) of K graphs
    (K, p, p), by min-label propagation with pointer jumping (apq_structure's loop, batched;
    a converged row is left as it is: its labels are their own labels' labels)."""
    k, p = adjacency.shape[:2]
    labels = np.broadcast_to(np.arange(p), (k, p)).copy()
    while True:
        spread = np.where(adjacency, labels[:, None, :], p).min(axis=2)
        if np.array_equal(spread, labels):
            return labels
        labels = np.take_along_axis(spread, spread, axis=1)


def check_structure_batch(
    d: np.ndarray,
    wait: np.ndarray,
    eps: float,
    no_outlier_mean_d: float,
    good_mean_d: float,
    outlier_ratio: float,
) -> StructureBatch:
    """The structure check (DBSCAN with ``min_samples`` 2: connected components of the
    eps-graph, isolated points are noise) of K point sets ``(d, wait)``, each (K, p).

    Metric ``|wait_a - wait_b| / wait_range + |D_a - D_b|`` per set (wait range 0: the
    first term is 0). Good when no outliers and mean D < ``no_outlier_mean_d``, or mean D
    <= ``good_mean_d`` and outliers < ``outlier_ratio`` x the mean cluster size.
    """
    k, p = d.shape
    span = wait.max(axis=1) - wait.min(axis=1)
    gap = np.abs(wait[:, :, None] - wait[:, None, :])
    dw = np.zeros_like(gap)
    np.divide(gap, span[:, None, None], out=dw, where=(span > 0)[:, None, None])
    adjacency = dw + np.abs(d[:, :, None] - d[:, None, :]) <= eps
    adjacency[:, np.arange(p), np.arange(p)] = True
    outlier = adjacency.sum(axis=2) == 1
    labels = np.where(outlier, -1, components_batch(adjacency))
    n_out = outlier.sum(axis=1)
    # a component is labelled by its smallest index, and noise is a component of one, so the
    # clusters are the non-noise points labelled by their own index
    n_clusters = ((labels == np.arange(p)) & ~outlier).sum(axis=1)
    mean_size = np.divide(p - n_out, n_clusters, out=np.zeros(k), where=n_clusters > 0)
    mean_d = d.mean(axis=1) if p else np.ones(k)  # each row as its own 1-D mean
    good = ((n_out == 0) & (mean_d < no_outlier_mean_d)) | (
        (mean_d <= good_mean_d) & (n_out < outlier_ratio * mean_size)
    )
    return StructureBatch(outlier, good)


def predict_group(
    apq: APQ, idx: HistoryIndex, targets: WaitTargets, lo: int, hi: int, out: _Out
) -> None:
    """APQ's answers for targets ``lo:hi``, which share queue, instant and rows before (so one
    history block), in one batched pass; each equals ``apq._predict_one``'s."""
    tgt = apq._target(targets, lo)
    rows = idx.history(tgt.queue, tgt.t, tgt.n_before)
    if len(rows) < apq.params.min_history:
        for k in range(lo, hi):
            apq._predict_one(idx, targets, k, out)
        return
    block = idx.block(tgt.queue, tgt.t, tgt.n_before)
    x_t = targets.summary[lo:hi]
    chain, _, thr = apq.chosen()
    queue: list[np.ndarray | None] = [None] * (hi - lo)
    if thr < np.inf:  # as APQ.candidates(): distributions where the spread exceeds thr
        hds = hist_distances_batch(targets.hist[lo:hi], block.hist)
        out.spreads[lo:hi] = spreads_batch(targets.hist[lo:hi], hds)
        queue = [hd if s > thr else None for hd, s in zip(hds, out.spreads[lo:hi], strict=True)]
    scratch = idx.scratch((2, *block.x.shape))
    dd = combined_distances(
        x_t, block.x, block.x_min, block.x_max, block.weights, (scratch[0], scratch[1]), queue
    )
    answers = answers_batch(
        apq, dd, block.wait, block.x, x_t, block.weights, (chain,), apq.chosen()[1]
    )
    for k, answer in enumerate(answers, start=lo):
        mode = "summaries" if queue[k - lo] is None else "distributions"
        got = apq.resolve({mode: answer}, out.spreads[k], len(rows))
        out.wait_s[k], out.names[k], out.support[k], out.modes[k] = got


def answers_batch(
    apq: APQ,
    dd: np.ndarray,
    wait: np.ndarray,
    x: np.ndarray,
    x_t: np.ndarray,
    w: np.ndarray,
    chains: tuple[str, ...],
    only: int | None = None,
) -> list[Answer]:
    """``apq._answer`` of K targets sharing one history (``dd``: (K, m) distances,
    ``x_t``: (K, 16)), the nearest points and the structure check batched."""
    p = apq.params
    m = dd.shape[1]
    if p.dbscan_min_samples != 2:
        return [apq._answer(dd[k], wait, x, x_t[k], w, chains, only) for k in range(len(dd))]
    near = nearest_batch(dd, min(m, int(p.nearest_fraction * m) + p.nearest_extra))
    st = check_structure_batch(
        np.take_along_axis(dd, near, axis=1),
        wait[near],
        p.dbscan_eps,
        p.good_no_outlier_mean_d,
        p.good_mean_d,
        p.good_outlier_ratio,
    )
    labels = np.where(st.outlier, -1, 0)  # only "not noise" is read downstream
    return [
        apq._finish(dd[k], near[k], st.good[k], labels[k], wait, x, x_t[k], w, chains, only)
        for k in range(len(dd))
    ]
