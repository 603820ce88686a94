"""IBL: instance-based learning of queue waits (Li, Groep, Wolters 2004-05; "Peers").

Each job is a point with nominal attributes (user, group, queue, executable) and numeric ones
(processors, requested time, time of day, and the queue/running-state summaries 3-16 of
``StateSweep.summary``). Between the target ``x`` and a history job ``y``

    d_k = [x_k != y_k]                          (nominal)
    d_k = |x_k - y_k| / (max_k - min_k)         (numeric, range over the window and x)
    d_k = min(|x_k - y_k|, 1 day - |x_k - y_k|) / half a day      (time of day)
    D   = sqrt( sum_k w_k d_k^2 / sum_k w_k )   (weighted heterogeneous distance)

and the prediction is the Gaussian-kernel average of the ``k`` nearest waits with weights
``exp(-D^2 / h^2)``. Numeric attributes enter as ``log1p`` (they are heavy-tailed, and a raw
range would squash all but the largest values). The weights ``w``, ``k`` and ``h`` are tuned by
random search on targets of the tuning part only. History: the most recent ``history_size``
jobs that had started by the submit time.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from predictor.core.state.request import RequestBatch
from predictor.core.wait.base import Progress, WaitEstimator
from predictor.core.wait.history import KnownHistory
from predictor.core.wait.targets import WaitTargets
from predictor.core.wait.types import WaitContext, WaitPrediction
from predictor.core.wait.window_extremes import BlockExtremes

NOMINAL = ("user", "group", "queue", "executable")
DAY_S = 86400.0
K_CHOICES = (1, 2, 5, 10, 20, 50, 100)
BATCH = 16  # targets whose distances are computed together (bounds the (K, m, f) array)


def feature_matrix(requests: RequestBatch, summary: np.ndarray) -> tuple[np.ndarray, int]:
    """(n, f) features per target and the column of time of day; nominal columns come first."""
    nominal = [getattr(requests, c).astype(float) for c in NOMINAL]
    numeric = [np.log1p(requests.procs.clip(min=0)), np.log1p(requests.req_time_s)]
    summary = np.log1p(np.maximum(np.asarray(summary, dtype=float)[:, 2:16], 0.0))
    tod = np.mod(requests.submit_s, DAY_S)
    cols = nominal + numeric + [tod] + [summary[:, c] for c in range(14)]
    return np.column_stack(cols), len(nominal) + len(numeric)


def unit_distances(
    window: np.ndarray,
    x: np.ndarray,
    n_nominal: int,
    tod_col: int,
    ranges: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Per-attribute distances ``d_k`` in [0, 1] between ``x`` (f,) and each window row (m, f)
    (``ranges``: :func:`window_range` of the window, when the caller has it)."""
    return unit_distances_batch(window, x[None, :], n_nominal, tod_col, ranges)[0]


def window_range(window: np.ndarray, n_nominal: int) -> tuple[np.ndarray, np.ndarray]:
    """(min, max) of the window's numeric columns (the ranges :func:`unit_distances_batch`
    scales by, before the targets widen them)."""
    numeric = window[:, n_nominal:]
    return numeric.min(axis=0), numeric.max(axis=0)


def unit_distances_batch(
    window: np.ndarray,
    xs: np.ndarray,
    n_nominal: int,
    tod_col: int,
    ranges: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """(K, m, f) :func:`unit_distances` of K targets ``xs`` (K, f) against one window (m, f)
    in one numpy pass; the window's column ranges are taken once for all K (``ranges``:
    :func:`window_range` of this window, when the caller has it). A column without a positive
    range is divided by 1 and then set to 0: the plain division is several times faster than
    a masked one (``where=``), and gives the same numbers."""
    diff = np.abs(window[None, :, :] - xs[:, None, :])
    out = np.empty_like(diff)
    np.greater(diff[:, :, :n_nominal], 0, out=out[:, :, :n_nominal])
    num = xs[:, n_nominal:]
    lo, hi = window_range(window, n_nominal) if ranges is None else ranges
    span = np.maximum(hi, num) - np.minimum(lo, num)  # (K, f - n_nominal)
    flat = ~(span > 0)
    numeric = out[:, :, n_nominal:]
    np.divide(diff[:, :, n_nominal:], np.where(flat, 1.0, span)[:, None, :], out=numeric)
    if flat.any():
        np.copyto(numeric, 0.0, where=np.broadcast_to(flat[:, None, :], numeric.shape))
    tod = diff[:, :, tod_col]
    out[:, :, tod_col] = np.minimum(tod, DAY_S - tod) / (DAY_S / 2)
    return out


def squared_unit_distances(
    window: np.ndarray,
    x: np.ndarray,
    n_nominal: int,
    tod_col: int,
    ranges: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """``d * d`` for ``d = unit_distances(window, x, ...)``, (m, f), bit for bit: the same
    operations on each element, done in place in one (m, f) array (the batch's three
    (m, f) temporaries and the square's copy cost twice the arithmetic on a 4,000-row
    window, issue 18)."""
    d = np.subtract(window, x)
    np.abs(d, out=d)
    tod = d[:, tod_col].copy()
    np.greater(d[:, :n_nominal], 0, out=d[:, :n_nominal])
    num = x[n_nominal:]
    lo, hi = window_range(window, n_nominal) if ranges is None else ranges
    span = np.maximum(hi, num) - np.minimum(lo, num)
    flat = ~(span > 0)
    numeric = d[:, n_nominal:]
    np.divide(numeric, np.where(flat, 1.0, span), out=numeric)
    if flat.any():
        numeric[:, flat] = 0.0
    d[:, tod_col] = np.minimum(tod, DAY_S - tod) / (DAY_S / 2)
    np.multiply(d, d, out=d)
    return d


def _column(
    values: np.ndarray, x: float, c: int, n_nominal: int, tod_col: int, span: float
) -> np.ndarray:
    """Column ``c`` of :func:`unit_distances_batch` for one target: ``values`` is the
    window's column, ``x`` the target's value, ``span`` the range it is scaled by."""
    diff = np.abs(values - x)
    if c < n_nominal:
        return (diff > 0).astype(float)
    if c == tod_col:
        return np.minimum(diff, DAY_S - diff) / (DAY_S / 2)
    return diff / span if span > 0 else np.zeros_like(diff)


def squared_distances_each(
    window: np.ndarray,
    xs: np.ndarray,
    n_nominal: int,
    tod_col: int,
    wn: np.ndarray,
    ranges: tuple[np.ndarray, np.ndarray] | None = None,
) -> Iterator[np.ndarray]:
    """``(d_k * d_k) @ wn`` for k = 0, 1, ..., with ``d_k = unit_distances_batch(window,
    xs, ...)[k]``: each window row's ``D^2`` (the module's formula, ``wn`` the weights over
    their sum), one (m,) array at a time.

    Targets that differ in a few attributes only (a molding arrival's candidate sizes: the
    size and the state sums it enters) overwrite those columns of target 0's squares in
    place and put them back after: the same numbers, without a (K, m, f) pass or an (m, f)
    copy per target. The window's ranges (``ranges``, else :func:`window_range`) are taken
    once."""
    num = xs[:, n_nominal:]
    lo, hi = window_range(window, n_nominal) if ranges is None else ranges
    span = np.zeros(xs.shape)
    span[:, n_nominal:] = np.maximum(hi, num) - np.minimum(lo, num)
    sq = squared_unit_distances(window, xs[0], n_nominal, tod_col, (lo, hi))
    yield sq @ wn
    differ = (xs != xs[0]) | (span != span[0])
    for k in range(1, len(xs)):
        cols = np.flatnonzero(differ[k])
        kept = sq[:, cols]  # a copy: put back once target k is answered
        for c in cols:
            d = _column(window[:, c], xs[k, c], int(c), n_nominal, tod_col, span[k, c])
            sq[:, c] = d * d
        yield sq @ wn
        sq[:, cols] = kept


def kernel_average(d2: np.ndarray, waits: np.ndarray, k: int, h: float) -> float:
    """``exp(-D^2/h^2)``-weighted mean wait of the ``k`` nearest (by squared distance ``d2``)."""
    k = min(k, d2.size)
    near = np.argpartition(d2, k - 1)[:k] if k < d2.size else np.arange(d2.size)
    w = np.exp(-d2[near] / (h * h))
    if w.sum() <= 1e-300:  # all beyond the kernel's reach: the single nearest answers
        return float(waits[near[np.argmin(d2[near])]])
    return float(np.dot(w, waits[near]) / w.sum())


class IBL(WaitEstimator):
    """k-NN wait predictor with a heterogeneous distance and a Gaussian kernel.

    Parameters
    ----------
    history_size : most recent known jobs searched per target.
    n_iter : random-search budget (configurations tried on the tuning part).
    tune_targets : tuning-part targets each configuration is scored on (AAE).
    min_history : tuning targets need at least this many known jobs.
    random_state : seed of the search and of the choice of tuning targets.
    """

    name = "ibl"

    def __init__(
        self,
        history_size: int = 4000,
        n_iter: int = 60,
        tune_targets: int = 300,
        min_history: int = 50,
        random_state: int | None = 0,
    ) -> None:
        self.history_size = history_size
        self.n_iter = n_iter
        self.tune_targets = tune_targets
        self.min_history = min_history
        self.random_state = random_state

    def _prepare(self, ctx: WaitContext) -> None:
        self.__dict__.pop("_extremes", None)  # a refit searches other windows
        feats, self.tod_col_ = feature_matrix(RequestBatch.from_jobs(ctx.jobs), ctx.state.summary)
        self.n_nominal_ = len(NOMINAL)
        self.hist_ = KnownHistory.from_jobs(ctx.jobs)
        self.hfeats_ = feats[self.hist_.order]  # history rows in start order: windows are slices
        self.hwaits_ = ctx.jobs["wait_time"].to_numpy(dtype=float)[self.hist_.order]
        self.feats_ = feats

    def _window(self, m: int) -> slice:
        return slice(max(0, m - self.history_size), m)

    def _ranges(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`window_range` of window ``m``, read from the history's block extremes
        (``window_extremes.BlockExtremes``, built at the first call after a fit, not
        pickled): every target of a pool or an evaluation has its own window (issue 18)."""
        extremes: BlockExtremes | None = self.__dict__.get("_extremes")
        if extremes is None:
            extremes = BlockExtremes(self.hfeats_[:, self.n_nominal_ :])
            self.__dict__["_extremes"] = extremes
        window = self._window(m)
        return extremes.window(window.start, window.stop)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_extremes", None)
        return state

    def _learn(self, ctx: WaitContext) -> None:
        """Random search of (weights, k, h) minimising AAE on tuning-part targets."""
        rng = np.random.default_rng(self.random_state)
        self._prepare(ctx)
        rows = np.flatnonzero(np.isin(np.arange(ctx.n_tune), self.hist_.order))
        submit = ctx.jobs["submit_time"].to_numpy(dtype=float)
        prefix = self.hist_.prefix(submit[rows], rows)
        rows, prefix = rows[prefix >= self.min_history], prefix[prefix >= self.min_history]
        n_feat = int(self.feats_.shape[1])
        self.weights_, self.k_, self.h_ = np.ones(n_feat), 20, 0.3
        if rows.size == 0:
            self.tune_aae_ = None
            return
        pick = rng.choice(rows.size, size=min(self.tune_targets, rows.size), replace=False)
        d2 = [  # float32: a few hundred (history_size, f) matrices held for the search
            self._squared(self.feats_[r], m).astype(np.float32)
            for r, m in zip(rows[pick], prefix[pick], strict=True)
        ]
        waits = [self.hwaits_[self._window(m)] for m in prefix[pick]]
        actual = ctx.jobs["wait_time"].to_numpy(dtype=float)[rows[pick]]
        best = self._score(d2, waits, actual, self.weights_, self.k_, self.h_)
        for _ in range(self.n_iter - 1):
            w = rng.uniform(0.0, 1.0, n_feat) * (rng.uniform(size=n_feat) > 0.2)
            if w.sum() == 0:
                continue
            k = int(rng.choice(K_CHOICES))
            h = float(np.exp(rng.uniform(np.log(0.03), np.log(1.0))))
            score = self._score(d2, waits, actual, w, k, h)
            if score < best:
                best, self.weights_, self.k_, self.h_ = score, w, k, h
        self.tune_aae_ = best

    @staticmethod
    def _score(d2: list, waits: list, actual: np.ndarray, w: np.ndarray, k: int, h: float) -> float:
        wn = w / w.sum()
        pred = [kernel_average(d @ wn, y, k, h) for d, y in zip(d2, waits, strict=True)]
        return float(np.mean(np.abs(np.array(pred) - actual)))

    def _squared(self, x: np.ndarray, m: int) -> np.ndarray:
        window = self.hfeats_[self._window(m)]
        return squared_unit_distances(window, x, self.n_nominal_, self.tod_col_, self._ranges(m))

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        """Targets that share a window (a batch of requests in one snapshot) have their
        window's ranges taken once and share the distance columns they agree on
        (:func:`squared_distances_each`)."""
        feats, _ = feature_matrix(targets.requests, targets.summary)
        prefix = self.hist_.prefix(targets.known_at_s, targets.n_before)
        out = np.empty(len(targets))
        wn = self.weights_ / self.weights_.sum()
        done = 0
        for m in np.unique(prefix):
            sel = np.flatnonzero(prefix == m)
            if m == 0:
                out[sel] = 0.0
                continue
            window = self.hfeats_[self._window(int(m))]
            waits = self.hwaits_[self._window(int(m))]
            for lo in range(0, sel.size, BATCH):
                part = sel[lo : lo + BATCH]
                each = squared_distances_each(
                    window, feats[part], self.n_nominal_, self.tod_col_, wn, self._ranges(int(m))
                )
                for n, d2 in zip(part, each, strict=True):
                    out[n] = kernel_average(d2, waits, self.k_, self.h_)
            done += sel.size
            if progress is not None and done % 2000 < sel.size:
                progress(done / len(targets))
        support = np.minimum(prefix, self.history_size)
        return WaitPrediction(
            wait_s=out, support=support, extra={"k": np.full(len(targets), self.k_)}
        )
