"""APQ, Adaptive Prediction of Queue waits (the paper "End-to-End Predictions-Based Resource
Management Framework for Supercomputer Jobs" "Queue waiting time predictions";
docs/apq.md). Implements :class:`predictor.core.wait.types.WaitMethod`.

For a target arriving at ``t`` in queue q:

1. history = the most recent ``history_size`` jobs of q that started by ``t`` and arrived
   on an earlier row (``submit_j + wait_j <= t``: their wait is known); fewer than
   ``min_history`` -> ``fallback_median``;
2. distances D to every history job (:mod:`predictor.core.wait.apq_distance`), by summaries or,
   when the histogram distances are spread out enough, by distributions;
3. DBSCAN structure check on the nearest ``1% + 1`` (:mod:`predictor.core.wait.apq_structure`);
4. good structure -> ``stddev`` minimiser; otherwise the *chain*: "spec" = ``regression``,
   and if that is unusable the ``weighted_avg`` of the k nearest; or "median" = the
   ``weighted_median`` of the k nearest (our measured addition, docs/apq.md)
   (:mod:`predictor.core.wait.apq_predictors`).

With ``guard=True`` (off by default), :mod:`predictor.core.wait.apq_guard` then answers a
fallback where APQ's recent errors on already-resolved targets exceeded the fallback's.

``fit`` chooses the chain, its k and the spread threshold between summaries and
distributions by AAE on tuning-part targets only (the second half of the tuning part, so
they have history); parameters fix any of them instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from predictor.core.state import histograms as hg
from predictor.core.state.sweep import StateSweep
from predictor.core.wait import apq_batch as batch
from predictor.core.wait import apq_distance as dist
from predictor.core.wait import apq_predictors as pred
from predictor.core.wait.apq_guard import apply_guard
from predictor.core.wait.apq_index import HistoryIndex
from predictor.core.wait.apq_structure import check_structure
from predictor.core.wait.base import Progress, WaitEstimator
from predictor.core.wait.params import APQParams
from predictor.core.wait.targets import WaitTargets
from predictor.core.wait.types import WaitContext, WaitPrediction

MODES = ("summaries", "distributions")


@dataclass
class Target:
    """One prediction's inputs: the state at ``t`` and the history bound (rows < n_before)."""

    features: np.ndarray
    hist: np.ndarray
    queue: int
    t: float
    n_before: int
    values: list[np.ndarray] | None = None  # exact value sets, for hist_mode="union"
    shared: bool = False  # at a snapshot: the instant's histogram distances are kept (apq_instant)


@dataclass
class Answer:
    """One distance mode's answer. ``name`` is final for "stddev" and "fallback_median"
    ("open" otherwise: the chain and k, chosen in ``fit``, pick among the rest)."""

    name: str
    wait_s: float | None
    support: int
    regression: tuple[float, int] | None = None
    wavg: np.ndarray | None = None  # over APQ.ks("spec")
    wmed: np.ndarray | None = None  # over APQ.ks("median")


@dataclass
class _Out:
    """The per-target answers of one ``_predict`` call, filled in place."""

    wait_s: np.ndarray
    names: np.ndarray
    support: np.ndarray
    modes: np.ndarray
    spreads: np.ndarray

    @classmethod
    def empty(cls, n: int) -> _Out:
        return cls(
            np.zeros(n),
            np.empty(n, dtype=object),
            np.zeros(n, dtype=np.int64),
            np.empty(n, dtype=object),
            np.full(n, np.nan),
        )


class APQ(WaitEstimator):
    """The APQ wait predictor. Parameters: any field of :class:`APQParams`.

    Learned in ``fit`` (tuning part only): ``chain_`` ("spec" or "median", what answers
    without a good structure), ``k_``, ``spread_threshold_`` (distributions when the
    histogram-distance spread exceeds it) and ``tuning_`` (the AAE grid).
    """

    name = "apq"

    def __init__(self, **params: Any) -> None:
        for name, value in params.items():  # the keyword parameters only (the contract)
            setattr(self, name, value)

    @property
    def params(self) -> APQParams:
        """The settings: :class:`APQParams` from ``get_params()``, built once (an unknown
        name or a bad value raises when first used, at ``fit``)."""
        built: APQParams | None = self.__dict__.get("_params")
        if built is None:
            built = self._params = APQParams(**self.get_params())
        return built

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the history index (rebuilt on first use), as the bundle store
        saves it (``predictor.services.fitted_store``)."""
        return {**self.__dict__, "_index": None}

    # ------------------------------------------------------------------ plumbing
    def index(self, sweep: StateSweep) -> HistoryIndex:
        cached: tuple[StateSweep, HistoryIndex] | None = self.__dict__.get("_index")
        if cached is None or cached[0] is not sweep:
            cached = self._index = (sweep, HistoryIndex(sweep, self.params))
        return cached[1]

    @staticmethod
    def trace_target(sweep: StateSweep, i: int, union: bool) -> Target:
        a = sweep.arrays
        values = sweep.hist_values(i) if union else None
        return Target(sweep.summary[i], sweep.hist[i], int(a.queue[i]), a.submit[i], i, values)

    def ks(self, chain: str) -> tuple[int, ...]:
        base = self.params.k_candidates if chain == "spec" else self.params.median_k_candidates
        extra = () if self.params.k is None else (self.params.k,)
        return tuple(sorted(set(base) | set(extra)))

    def chains(self) -> tuple[str, ...]:
        return (self.params.chain,) if self.params.chain else ("spec", "median")

    def chosen(self) -> tuple[str, int, float]:
        """(chain, k, spread threshold): fixed parameters, else learned, else defaults."""
        p = self.params
        chain = cast(str, p.chain or getattr(self, "chain_", "spec"))
        k = p.k if p.k is not None else getattr(self, "k_", self.ks(chain)[0])
        thr = (
            p.spread_threshold
            if p.spread_threshold is not None
            else getattr(self, "spread_threshold_", np.inf)
        )
        return chain, k, thr

    # ------------------------------------------------------------------ one target
    def candidates(
        self,
        idx: HistoryIndex,
        tgt: Target,
        modes: tuple[str, ...] | None = None,
        chains: tuple[str, ...] | None = None,
    ) -> tuple[dict[str, Answer], float, int]:
        """Answers per distance mode for one target (the chosen mode and chain when None),
        the histogram-distance spread (NaN when not computed) and the history size."""
        p = self.params
        chain, _, thr = self.chosen()
        rows = idx.history(tgt.queue, tgt.t, tgt.n_before)
        if len(rows) < p.min_history:
            a = idx.sweep.arrays
            value, support = pred.fallback_median(
                idx.wait[rows],
                a.procs[rows],
                tgt.features[0],
                p.size_class_edges,
                p.fallback_recent,
            )
            answer = Answer("fallback_median", value, support)
            return {m: answer for m in modes or MODES}, np.nan, len(rows)
        block = idx.block(tgt.queue, tgt.t, tgt.n_before)
        w, x, wait = block.weights, block.x, block.wait
        d = dist.feature_distances(
            tgt.features, x, block.x_min, block.x_max, out=idx.scratch(x.shape)
        )
        spread, hd = np.nan, None
        if (modes is not None and "distributions" in modes) or (modes is None and thr < np.inf):
            hd, spread = self._hist_distances(idx, tgt, rows)
        if modes is None:
            modes = ("distributions",) if hd is not None and spread > thr else ("summaries",)
        only = None if chains else self.chosen()[1]  # a prediction reads the chosen k only
        out: dict[str, Answer] = {}
        for mode in modes:
            d_mode = d
            if mode == "distributions":
                d_mode = d.copy()
                d_mode[:, dist.QUEUE_FEATURES] = hd
            out[mode] = self._answer(
                dist.combine(d_mode, w), wait, x, tgt.features, w, chains or (chain,), only
            )
        return out, spread, len(rows)

    def _hist_distances(
        self, idx: HistoryIndex, tgt: Target, rows: np.ndarray
    ) -> tuple[np.ndarray, float]:
        """(m, 6) normalised histogram distances and their spread. At a snapshot the four
        kinds the request does not change come from the instant's kept columns
        (:mod:`predictor.core.wait.apq_instant`): the same numbers."""
        if self.params.hist_mode == "union":
            values = tgt.values if tgt.values is not None else []
            hd = dist.hist_distances_union(values, idx.sweep, rows, self.params.hist_bins)
            return hd, dist.distribution_spread(hd)
        block = idx.block(tgt.queue, tgt.t, tgt.n_before)
        if not tgt.shared or not len(rows):
            hd = dist.hist_distances_fixed(tgt.hist, block.hist)
            return hd, dist.distribution_spread(hd)
        kept, kept_std = idx.instant.get(block.key, tgt.hist, block.kinds_hist)
        own = dist.hist_distances_kinds(
            tgt.hist, idx.instant.request_kinds(block.key, block.kinds_hist), hg.REQUEST_KINDS
        )
        hd = np.empty((len(own), hg.N_HIST))
        hd[:, hg.REQUEST_KINDS] = own
        hd[:, hg.INSTANT_KINDS] = kept
        return hd, dist.spread_of(np.concatenate([dist.column_std(own), kept_std]))

    def _answer(
        self,
        d: np.ndarray,
        wait: np.ndarray,
        x: np.ndarray,
        x_t: np.ndarray,
        w: np.ndarray,
        chains: tuple[str, ...],
        only: int | None = None,
    ) -> Answer:
        p = self.params
        n_near = min(len(d), int(p.nearest_fraction * len(d)) + p.nearest_extra)
        near = np.argpartition(d, n_near - 1)[:n_near]
        st = check_structure(
            d[near],
            wait[near],
            p.dbscan_eps,
            p.dbscan_min_samples,
            p.good_no_outlier_mean_d,
            p.good_mean_d,
            p.good_outlier_ratio,
        )
        return self._finish(d, near, st.good, st.labels, wait, x, x_t, w, chains, only)

    def _finish(
        self,
        d: np.ndarray,
        near: np.ndarray,
        good: bool,
        labels: np.ndarray,
        wait: np.ndarray,
        x: np.ndarray,
        x_t: np.ndarray,
        w: np.ndarray,
        chains: tuple[str, ...],
        only: int | None = None,
    ) -> Answer:
        """The predictors after the structure check: the stddev minimiser on a good
        structure, else the chain's predictors (the weighted median at k = ``only`` alone
        when given: a prediction's chosen k; ``fit`` scores every k)."""
        p = self.params
        if good:
            got = pred.stddev_minimiser(
                d[near], wait[near], labels, p.window_width, p.window_max_start
            )
            if got is not None:
                return Answer("stddev", *got)
        answer = Answer("open", None, 0)
        known = near[np.lexsort((near, d[near]))]  # the nearest, in (D, row) order
        if "spec" in chains:
            radii = np.arange(p.radius_start, p.radius_max + 1e-9, p.radius_step)
            answer.regression = pred.regression(
                d, x, x_t, wait, w, radii, p.jobs_per_feature, p.ridge_alpha
            )
            answer.wavg = pred.weighted_average(d, wait, self.ks("spec"), known)
        if "median" in chains:
            answer.wmed = pred.weighted_median(d, wait, self.ks("median"), known, only)
        return answer

    def resolve(
        self,
        answers: dict[str, Answer],
        spread: float,
        n_history: int,
        chain: str | None = None,
        k: int | None = None,
        threshold: float | None = None,
    ) -> tuple[float, str, int, str]:
        """Final (wait, predictor, support, mode) of one target's answers."""
        fixed_chain, fixed_k, fixed_thr = self.chosen()
        chain, k = chain or fixed_chain, k or fixed_k
        threshold = fixed_thr if threshold is None else threshold
        if len(answers) == 1:
            mode = next(iter(answers))
        else:
            mode = "distributions" if spread > threshold else "summaries"
        ans = answers[mode]
        if ans.name == "fallback_median":
            return max(cast(float, ans.wait_s), 0.0), ans.name, ans.support, "none"
        if ans.name == "stddev":
            return max(cast(float, ans.wait_s), 0.0), ans.name, ans.support, mode
        if chain == "median":
            return (
                float(cast(np.ndarray, ans.wmed)[self.ks("median").index(k)]),
                "weighted_median",
                min(k, n_history),
                mode,
            )
        if ans.regression is not None:
            return ans.regression[0], "regression", ans.regression[1], mode
        wavg = cast(np.ndarray, ans.wavg)
        return float(wavg[self.ks("spec").index(k)]), "weighted_avg", min(k, n_history), mode

    # ------------------------------------------------------------------ contract
    def _learn(self, ctx: WaitContext) -> None:
        """Choose the chain, k and the distributions threshold on tuning-part targets only."""
        p = self.params
        a = ctx.state.arrays
        rows = np.arange(ctx.n_tune // 2, ctx.n_tune)
        rows = rows[a.present[rows]]
        if len(rows) > p.tune_targets:
            rows = rows[np.linspace(0, len(rows) - 1, p.tune_targets).astype(int)]
        self.chain_, self.k_, self.spread_threshold_ = "spec", self.ks("spec")[0], np.inf
        self.tuning_: dict[str, Any] = {"targets": int(len(rows))}
        fixed = p.chain is not None and p.k is not None and p.spread_threshold is not None
        if len(rows) == 0 or fixed:
            return
        idx = self.index(ctx.state)
        union = p.hist_mode == "union"
        modes: tuple[str, ...] = MODES
        if p.spread_threshold is not None:
            modes = ("summaries",) if p.spread_threshold == np.inf else MODES
        runs = [
            self.candidates(idx, self.trace_target(ctx.state, int(i), union), modes, self.chains())
            for i in rows
        ]
        actual = idx.wait[rows]
        grid: dict[tuple[str, int, float], float] = {}
        for chain, k, thr in self._grid(np.array([s for _, s, _ in runs])):
            got = np.array([self.resolve(ans, s, n, chain, k, thr)[0] for ans, s, n in runs])
            grid[(chain, k, thr)] = float(np.mean(np.abs(got - actual)))
        self.chain_, self.k_, self.spread_threshold_ = min(grid, key=grid.__getitem__)
        self.tuning_["aae_s"] = {f"{c} k={k} threshold={t:.4g}": v for (c, k, t), v in grid.items()}

    def _grid(self, spreads: np.ndarray) -> list[tuple[str, int, float]]:
        p = self.params
        finite = spreads[np.isfinite(spreads)]
        if p.spread_threshold is not None:
            thresholds = [p.spread_threshold]
        else:
            thresholds = [
                -np.inf
                if q <= 0
                else np.inf
                if q >= 1 or len(finite) == 0
                else float(np.quantile(finite, q))
                for q in p.spread_quantiles
            ]
        return [
            (chain, k, thr)
            for chain in self.chains()
            for k in ((p.k,) if p.k is not None else self.ks(chain))
            for thr in thresholds
        ]

    def _target(self, targets: WaitTargets, k: int) -> Target:
        union = self.params.hist_mode == "union"
        return Target(
            targets.summary[k],
            targets.hist[k],
            int(targets.requests.queue[k]),
            float(targets.known_at_s[k]),
            int(targets.n_before[k]),
            targets.values(k) if union else None,
            shared=targets.rows is None,
        )

    def _predict_one(self, idx: HistoryIndex, targets: WaitTargets, k: int, out: _Out) -> None:
        answers, out.spreads[k], n_hist = self.candidates(idx, self._target(targets, k))
        got = self.resolve(answers, out.spreads[k], n_hist)
        out.wait_s[k], out.names[k], out.support[k], out.modes[k] = got

    def _predict_group(
        self, idx: HistoryIndex, targets: WaitTargets, lo: int, hi: int, out: _Out
    ) -> None:
        """Targets ``lo:hi`` share queue, instant and rows before (so one history block): one
        batched pass (:func:`predictor.core.wait.apq_batch.predict_group`)."""
        batch.predict_group(self, idx, targets, lo, hi, out)

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        """APQ prediction per target; predictor name, support and distance mode per target.

        Consecutive targets with the same history (a molding arrival's candidates) are
        answered together (:meth:`_predict_group`) unless the histograms are binned per pair
        (``hist_mode="union"``)."""
        idx = self.index(self.history_.state)
        n = len(targets)
        out = _Out.empty(n)
        together = self.params.hist_mode != "union"
        q, t, nb = targets.requests.queue, targets.known_at_s, targets.n_before
        step, k = max(1, n // 200), 0
        while k < n:
            end = k + 1
            while together and end < n and (q[end], t[end], nb[end]) == (q[k], t[k], nb[k]):
                end += 1
            if end - k > 1:
                self._predict_group(idx, targets, k, end, out)
            else:
                self._predict_one(idx, targets, k, out)
            if progress is not None and k // step != end // step:
                progress(end / n)
            k = end
        if progress is not None:
            progress(1.0)
        wait_s, names, support, modes, spreads = (
            out.wait_s,
            out.names,
            out.support,
            out.modes,
            out.spreads,
        )
        extra = {"mode": modes, "spread": spreads}
        if self.params.guard:
            if targets.rows is None:
                raise ValueError("APQ(guard=True) is an evaluation option: it needs log rows")
            extra["apq_wait_s"] = wait_s
            wait_s, names, extra["guarded"] = apply_guard(
                self.history_, targets.rows, wait_s, names, self.params
            )
        return WaitPrediction(wait_s=wait_s, predictor=names, support=support, extra=extra)
