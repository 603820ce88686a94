"""Density rangeSets as a runtime method (:mod:`.types` contract), registered as ``density``.

"End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs", section
on runtime prediction (rangeSets, success and coverage). Each target's runtime density
(:mod:`predictor.core.runtime.combined`) is the mixture

``f = a * boxes(h) + b * boxes(h / req_h * req) + c * lognormal(q10, q50, q90)``

of (a) the seed's ranges around each relevant past runtime ``h`` of the request's tuple
(falling back to its user, size, then every job; the seed's relevant history), (b) the same
past jobs' used share of their requested time times the request's requested time, and (c) the
quantile GBM's answer (:class:`QuantileGBRange`, features ``quantile_features``). The
rangeSet is ``{r : f(r) >= lam}`` clipped to ``[1 s, requested time]`` (plus a grace: "Upper
bound" below), each range weighted by its mass.

Weights. ``(a, b, c)`` are fitted on the same dev jobs as the level, before it
(``fit_weights``, the default since the sixth runtime pass, docs/results.md): by maximum
likelihood of the dev jobs' actual runtimes under the mixture, EM from ``weights`` (0.4, 0.2,
0.4) (:mod:`predictor.core.runtime.mix_weights`). A common level spends length where the
density is highest, the shortest sets for a given success only if ``f`` is the runtimes'
density. ``fit_weights=False`` keeps ``weights``.

Upper bound. With ``overrun`` (the default since the eighth runtime pass) ranges are clipped
to ``[1 s, requested time + grace]``, the grace learned on the tuning part: jobs run past
their limit before the scheduler kills them (:mod:`predictor.core.runtime.overrun`). The
grace is the median overrun there (``grace_quantile`` 50), the typical kill delay; the 99th
percentile (the seventh pass) took rare hours-long overruns for a grace. ``overrun=False``
clips at the requested time, as the seed does.

Level. ``fit`` picks ``lam`` from a grid on the second half of the tuning part only: the quantile
GBM is refitted with the first half as its tuning part, every ``dev`` row is answered at its own
arrival (history ended before it), and the ``lam`` with the highest success at coverage
``<= max_coverage`` (coverage: summed length over the baseline ``[min, max]``'s) is kept; the
smallest coverage when no level reaches that bound. Between the grid's last level under the
bound and its first over it, ``refine`` bisection steps (in ``log lam``) look for the level
that spends the coverage the bound allows (the grid's step of 10^0.25 left CTC's dev part at
22.8 % coverage with the next step over 25 %, docs/results.md).

Online level (``target_coverage``, default 0.24). A level fixed on the tuning part drifts
(test coverage 14.9-25.9 % on the shared logs where the dev part gave 24.3-24.5 %). Coverage
needs no outcome (range and baseline lengths are known at arrival), so per block of ``every``
log rows the level is re-set to meet ``target_coverage`` on the ``window`` jobs before the
block (:mod:`predictor.core.runtime.level`); ``lam_`` answers until ``MIN_WINDOW`` such jobs
exist. ``every`` = 2,000 rows and ``window`` = 300 jobs bound the work at 0.15 extra answers
per log row (a budget, not tuned: 0.5 per row made HPC2N's evaluation too slow to run here).
The target sits one point under the 25 % ceiling the choice uses, less the mean drift from a
window to the next block's tail over the last ``memory`` = 5 blocks, all past
(:func:`predictor.core.runtime.level.feedback_target`; ``memory=0`` aims at the setpoint
alone). ``target_coverage=None`` keeps the fixed level.

Setpoint chosen on the tuning part (``setpoint_grid``). One setpoint for every log left CTC
0.2 points of success short at 24.4 % coverage while SDSC and HPC2N stayed at 19-23 %. So
the setpoint is chosen per log on the same dev jobs as the level: the rule above runs on them
(the dev fit's windows, all in the tuning part's second half) once per setpoint of the grid,
and the largest setpoint whose dev coverage stays at or under ``max_coverage`` is kept (the
grid's smallest when none does; ``target_coverage`` when no dev block is steered). An empty
grid aims at ``target_coverage``.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Iterator
from typing import Any

import numpy as np

from predictor.core.lru import LRU, kept_on
from predictor.core.runtime.base import Progress, RuntimeEstimator
from predictor.core.runtime.combined import (
    MIN_RUNTIME_S,
    Pieces,
    clipped,
    lognormal_pieces,
    mixture,
    pieces_ordered,
    recency_weights,
    select_clipped,
)
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.level import (
    LengthWindow,
    block_of,
    feedback_target,
    length_table,
    level_for_coverage,
    window_rows,
)
from predictor.core.runtime.mix_weights import density_at, em_weights
from predictor.core.runtime.overrun import GRACE_QUANTILE, overrun_grace
from predictor.core.runtime.params import LEVELS
from predictor.core.runtime.peers import BaselineRange
from predictor.core.runtime.quantile import DEFAULT_FEATURES, QuantileGBRange
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.runtime.relevant import RelevantHistory
from predictor.core.runtime.targets import RuntimeTargets
from predictor.core.runtime.types import RuntimePrediction
from predictor.core.state.snapshot import Snapshot

#: ``log10 lam`` per second tried on the tuning part (results.md, issue 12).
LOG_LAM_GRID = tuple(np.arange(-3.5, -6.0 - 1e-9, -0.25))
LOG_LAM_MARGIN = 1.0  # the online bisection may leave the grid by one decade each way
MIN_WINDOW = 50  # fewer recent jobs than this: keep the tuning part's level
ORDER_BYTES = 32 * 2**20  # edge orders kept: 350 kB each at HPC2N's 22,000 relevant jobs
HINT_FROM = 500  # relevant jobs: 1,000 edges sort in 145 us, 40 from a kept order (300: 21, 37)
#: setpoints tried on the tuning part (module doc): 20 % to the 25 % ceiling in steps of 0.25 %
SETPOINT_GRID = tuple(round(0.2 + 0.0025 * k, 4) for k in range(21))


class DensityRangeSet(RuntimeEstimator):
    """Highest-density rangeSets at one level ``lam`` chosen on the tuning part (module doc)."""

    name = "density"

    def __init__(
        self,
        *,
        weights: tuple[float, float, float] = (0.4, 0.2, 0.4),
        ratio: float = 1.2,
        decay: float = 1.0,
        max_coverage: float = 0.25,
        log_lam_grid: tuple[float, ...] = LOG_LAM_GRID,
        max_dev: int = 3000,
        refine: int = 3,
        target_coverage: float | None = 0.24,
        every: int = 2000,
        window: int = 300,
        memory: int = 5,
        setpoint_grid: tuple[float, ...] = SETPOINT_GRID,
        quantile_features: str = DEFAULT_FEATURES,
        fit_weights: bool = True,
        overrun: bool = True,
        grace_quantile: float = 50.0,
        random_state: int = 0,
    ) -> None:
        self.weights = weights
        self.fit_weights = fit_weights
        self.overrun = overrun
        self.grace_quantile = grace_quantile
        self.quantile_features = quantile_features
        self.setpoint_grid = setpoint_grid
        self.target_coverage = target_coverage
        self.every = every
        self.window = window
        self.memory = memory
        self.refine = refine
        self.ratio = ratio
        self.decay = decay
        self.max_coverage = max_coverage
        self.log_lam_grid = log_lam_grid
        self.max_dev = max_dev
        self.random_state = random_state

    def _learn(self, ctx: RuntimeContext) -> None:
        self.weights_: tuple[float, float, float] | None = None  # set by the level's choice
        self.grace_s_ = self._grace(ctx)
        self.quantile_ = self._quantile().fit(ctx)
        self.lam_, self.dev_, self.setpoint_ = self._choose_level(ctx)
        self.baseline_ = BaselineRange().fit(ctx)
        self._windows: dict[int, LengthWindow | None] = {}
        self._reset_blocks()

    def _quantile(self) -> QuantileGBRange:
        """The part (c) model, unfitted (its features: ``quantile_features``)."""
        return QuantileGBRange(feature_set=self.quantile_features, random_state=self.random_state)

    def _reset_blocks(self) -> None:
        self._block_lam: dict[int, float] = {}
        self._block_target: dict[int, float] = {}  # coverage each steered block aimed at
        self._block_u: dict[int, float | None] = {}  # level for the setpoint, per window
        self._block_drift: dict[int, float | None] = {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A model pickled before the drift feedback (``memory`` 0) or before the setpoint
        was chosen on the tuning part (``target_coverage``) answers as it did."""
        state.setdefault("memory", 0)
        state.setdefault("setpoint_grid", ())
        state.setdefault("setpoint_", state.get("target_coverage"))
        state.setdefault("quantile_features", "request")
        state.setdefault("fit_weights", False)
        state.setdefault("overrun", False)
        state.setdefault("grace_quantile", GRACE_QUANTILE)  # unused while overrun is off
        state.setdefault("grace_s_", 0.0)
        state.setdefault("weights_", None)
        for cache in ("_block_target", "_block_u", "_block_drift", "_windows"):
            state.setdefault(cache, {})
        self.__dict__.update(state)

    def fitted_info(self) -> dict[str, Any]:
        online = {"target_coverage": self.target_coverage, "setpoint": self.setpoint_}
        online["every"] = self.every
        steer = {"window": self.window, "memory": self.memory}
        fitted: dict[str, Any] = {"weights": list(self.mix_weights())} if self.fit_weights else {}
        fitted |= {"grace_s": self.grace_s_} if self.overrun else {}
        return {"lam_per_s": self.lam_, **self.dev_, **online, **steer, **fitted}

    def _levels(self, n_before: np.ndarray) -> np.ndarray:
        """Per target: the tuning part's ``lam_``, or with ``target_coverage`` its block's
        level steered to that coverage on the recent past (:mod:`.level`)."""
        target = self.setpoint_
        if target is None:
            return np.full(n_before.shape, self.lam_)
        blocks = block_of(n_before, self.every)
        for b in np.unique(blocks):
            if int(b) not in self._block_lam:
                self._block_lam[int(b)] = self._block_level(int(b), float(target))
        return np.array([self._block_lam[int(b)] for b in blocks], dtype=float)

    def settled_key(self, snapshot: Snapshot) -> Hashable | None:
        """The part (c) model's (``QuantileGBRange.settled_key``): on a settled history the
        past runtimes, the block's level and the request's codes do not move with the
        instant; only the load the GBM reads does (``runtime.settled``)."""
        key = self.quantile_.settled_key(snapshot)
        return None if key is None else ("density", key)

    def train_ahead(self, tuning_part: bool = True) -> DensityRangeSet:
        """The quantile models of every block (the tuning part's too, unless ``tuning_part``
        is False), then the level of every block of the log, in order (each a pure function
        of the past: same answers)."""
        self.quantile_.train_ahead(tuning_part)
        n = self.history_.submit_s.size
        self._levels(np.arange(n // self.every + 1, dtype=np.int64) * self.every)
        return self

    def _block_level(self, block: int, setpoint: float) -> float:
        """``lam`` whose coverage on the ``window`` jobs before the block meets the setpoint
        less the mean drift of the last ``memory`` blocks (:func:`.level.feedback_target`)."""
        for k in range(max(block - self.memory, 0), block + 1):
            if k not in self._block_u:
                self._observe(k, setpoint)
        window = self._window(block)
        if window is None:
            return self.lam_
        past = range(block - self.memory + 1, block + 1)
        drifts = [d for k in past if (d := self._drift(k, setpoint)) is not None]
        target = feedback_target(setpoint, drifts, self.max_coverage)
        self._block_target[block] = target
        return self._bisect(window, target)

    def _observe(self, block: int, setpoint: float) -> None:
        """Record the level ``u`` that meets the setpoint on the window before ``block``."""
        window = self._window(block)
        self._block_u[block] = None if window is None else self._bisect(window, setpoint)

    def _drift(self, block: int, setpoint: float) -> float | None:
        """``coverage(window before block at u of the block before) - setpoint`` (:mod:`.level`;
        None before the first block or without a window or level). Computed from the two
        windows alone, so a block's level does not depend on which blocks were asked first
        (it did when a block was first seen at the start of a later block's memory)."""
        if block not in self._block_drift:
            if block < 1:
                return None
            if block - 1 not in self._block_u:
                self._observe(block - 1, setpoint)
            window, before = self._window(block), self._block_u.get(block - 1)
            drift = None if window is None or before is None else window.coverage(before) - setpoint
            self._block_drift[block] = drift
        return self._block_drift[block]

    def _window(self, block: int) -> LengthWindow | None:
        """Length table of the ``window`` jobs before the block (None: fewer than
        ``MIN_WINDOW`` after the tuning part, or no baseline length); kept per block."""
        if block not in self._windows:
            self._windows[block] = self._new_window(block)
        return self._windows[block]

    def _new_window(self, block: int) -> LengthWindow | None:
        ctx = self.history_
        rows = window_rows(ctx.run_s > 0, block * self.every, self.window, ctx.n_tune)
        if rows.size < MIN_WINDOW:
            return None
        mix = self._mixtures(ctx, RuntimeTargets.from_rows(ctx, rows), self.quantile_)
        base = self.baseline_.predict_rows(rows).length_s
        has = base > 0
        if not has.any():
            return None
        table = length_table([m for m, h in zip(mix, has, strict=True) if h])
        return LengthWindow(table, float(base[has].sum()))

    def _bisect(self, window: LengthWindow, target: float) -> float:
        """The lowest ``lam`` whose coverage on ``window`` is at most ``target``."""
        grid = np.asarray(self.log_lam_grid, dtype=float)
        lo, hi = float(grid.min()) - LOG_LAM_MARGIN, float(grid.max()) + LOG_LAM_MARGIN
        log_lam = level_for_coverage(lambda v: window.coverage(10.0**v), target, lo, hi)
        return float(10.0**log_lam)

    def _choose_level(self, ctx: RuntimeContext) -> tuple[float, dict[str, Any], float | None]:
        """``lam`` with the best dev success at coverage <= ``max_coverage``, its dev figures,
        and the online rule's setpoint chosen on the same dev jobs (module doc)."""
        grid = 10.0 ** np.asarray(self.log_lam_grid, dtype=float)
        half = ctx.n_tune // 2
        dev = np.arange(half, ctx.n_tune)
        dev = dev[ctx.run_s[dev] > 0]
        if dev.size > self.max_dev:
            dev = dev[np.linspace(0, dev.size - 1, self.max_dev).round().astype(np.int64)]
        if dev.size == 0:
            return float(grid[len(grid) // 2]), {"dev_targets": 0}, self.target_coverage
        dev_ctx = copy.copy(ctx)  # same arrays; the GBM's tuning part is the first half only
        dev_ctx.n_tune = half
        dev_grace = self._grace(dev_ctx)  # the dev fit's own, from its tuning part
        quantile = self._quantile().fit(dev_ctx)
        targets = RuntimeTargets.from_rows(dev_ctx, dev)
        actual = ctx.run_s[dev]
        if self.fit_weights:
            self.weights_ = self._fit_weights(dev_ctx, targets, quantile, actual)
        mix = self._mixtures(dev_ctx, targets, quantile, grace_s=dev_grace)
        baseline = BaselineRange().fit(dev_ctx)
        base = baseline.predict_rows(dev).length_s

        def dev_score(lam: float) -> tuple[float, float]:
            ranges = [self._rangeset(pc, lv, n, lam, req) for pc, lv, n, req in mix]
            hit = np.mean([r.contains(a) for r, a in zip(ranges, actual, strict=True)])
            return float(hit), sum(r.length_s for r in ranges) / max(base.sum(), 1e-12)

        log_lam = [float(v) for v in np.log10(grid)]
        scores = [dev_score(lam) for lam in grid]
        log_lam, scores = self._refine(log_lam, scores, dev_score)
        success = np.array([sc[0] for sc in scores])
        coverage = np.array([sc[1] for sc in scores])
        ok = coverage <= self.max_coverage
        best = (
            int(np.flatnonzero(ok)[np.argmax(success[ok])]) if ok.any() else int(coverage.argmin())
        )
        info = {
            "dev_targets": int(dev.size),
            "dev_success": round(float(success[best]), 4),
            "dev_coverage": round(float(coverage[best]), 4),
        }
        lam = float(10.0 ** log_lam[best])
        shadow = copy.copy(self)  # the online rule on the dev jobs: the dev fit's parts
        shadow.history_, shadow.quantile_, shadow.baseline_ = dev_ctx, quantile, baseline
        shadow.lam_, shadow._windows, shadow.grace_s_ = lam, {}, dev_grace
        setpoint, steered = shadow._choose_setpoint(targets.n_before, mix, base)
        return lam, {**info, **steered}, setpoint

    def _choose_setpoint(
        self, n_before: np.ndarray, mix: list[tuple[Pieces, str, int, float]], base: np.ndarray
    ) -> tuple[float | None, dict[str, Any]]:
        """The largest setpoint of the grid whose online rule keeps the coverage of the dev
        jobs (``n_before``, ``mix``, baseline lengths ``base``) at or under ``max_coverage``
        (module doc). Called on a copy fitted to the dev context."""
        grid = sorted(self.setpoint_grid)
        if self.target_coverage is None or not grid:
            return self.target_coverage, {}
        blocks = block_of(np.asarray(n_before), self.every)
        has = base > 0
        tables = {
            int(b): length_table([mix[i] for i in np.flatnonzero((blocks == b) & has)])
            for b in np.unique(blocks[has])
        }
        if all(self._window(b) is None for b in tables) or not has.any():
            return self.target_coverage, {"setpoint_dev_blocks": 0}
        coverage = []
        for s in grid:
            self.setpoint_ = s
            self._reset_blocks()
            lam = self._levels(np.array(sorted(tables), dtype=np.int64) * self.every)
            length = sum(t.length_at(v) for t, v in zip(tables.values(), lam, strict=True))
            coverage.append(length / float(base[has].sum()))
        ok = [s for s, c in zip(grid, coverage, strict=True) if c <= self.max_coverage]
        chosen = max(ok) if ok else grid[0]
        info = {
            "setpoint_dev_blocks": sum(self._window(b) is not None for b in tables),
            "setpoint_dev_coverage": round(coverage[grid.index(chosen)], 4),
        }
        return chosen, info

    def _refine(
        self,
        log_lam: list[float],
        scores: list[tuple[float, float]],
        dev_score: Any,
    ) -> tuple[list[float], list[tuple[float, float]]]:
        """Bisect ``refine`` times between the lowest grid level whose dev coverage stays
        under ``max_coverage`` and the next one down (over it): coverage grows as the level
        falls, so this spends the coverage the ceiling allows on the tuning part."""
        log_lam, scores = list(log_lam), list(scores)
        for _ in range(self.refine):
            order = np.argsort(log_lam)[::-1]  # high level (narrow) to low level (wide)
            cov = np.array([scores[i][1] for i in order])
            over = np.flatnonzero(cov > self.max_coverage)
            under = np.flatnonzero(cov <= self.max_coverage)
            if not over.size or not under.size or over[0] == 0:
                break
            hi, lo = order[over[0] - 1], order[over[0]]  # last under, first over
            mid = (log_lam[hi] + log_lam[lo]) / 2.0
            log_lam.append(mid)
            scores.append(dev_score(10.0**mid))
        return log_lam, scores

    def _mixtures(
        self,
        ctx: RuntimeContext,
        targets: RuntimeTargets,
        quantile: QuantileGBRange,
        weights: tuple[float, float, float] | None = None,
        grace_s: float | None = None,
    ) -> list[tuple[Pieces, str, int, float]]:
        """Per target: its density pieces, history level, support and the longest it can run
        (its requested time, plus the log's grace with ``overrun``: :mod:`.overrun`; the
        fitted ``grace_s_`` unless ``grace_s`` is given); the parts mixed with ``weights``
        (the fitted ones, :meth:`mix_weights`, unless given)."""
        w = self.mix_weights() if weights is None else weights
        out = []
        grace = (self.grace_s_ if grace_s is None else grace_s) if self.overrun else 0.0
        for parts, level, n, req in self._components(ctx, targets, quantile, w):
            mixed = [(pc, a) for pc, a in zip(parts, w, strict=True) if pc is not None]
            limit = req + grace if req > 0 else req  # the longest it can run (:mod:`.overrun`)
            out.append((mixture(mixed) if mixed else Pieces(np.zeros(1), np.zeros(0)), level,
                        n, limit))  # fmt: skip
        return out

    def _grace(self, ctx: RuntimeContext) -> float:
        """:func:`.overrun.overrun_grace` of the context's tuning part."""
        return overrun_grace(ctx.run_s, ctx.req_time_s, ctx.n_tune, self.grace_quantile)

    def mix_weights(self) -> tuple[float, float, float]:
        """The weights of parts (a), (b), (c): fitted on the tuning part with
        ``fit_weights`` (:mod:`.mix_weights`), else ``weights``."""
        fitted = self.__dict__.get("weights_")
        a, b, c = fitted if fitted is not None else self.weights
        return float(a), float(b), float(c)

    def _components(
        self,
        ctx: RuntimeContext,
        targets: RuntimeTargets,
        quantile: QuantileGBRange,
        weights: tuple[float, float, float],
    ) -> Iterator[tuple[list[Pieces | None], str, int, float]]:
        """Per target, in turn: parts (a), (b), (c) as pieces (None where missing or of weight
        0), history level, support and requested time. A generator, so that a caller mixing
        them holds one target's parts at a time (a whole log's parts at once doubled the
        peak memory of HPC2N's evaluation)."""
        a, b, c = weights
        gbm = quantile._predict(targets, None).ranges
        levels = (*LEVELS, "all")
        t_s = np.asarray(targets.t_s, dtype=float)
        spans = [ctx.levels[lv].bounds(targets.codes[lv], t_s) for lv in levels]  # all at once
        rec: dict[int, np.ndarray] = {}
        relevant = (ctx.params.history_start, ctx.params.history_overlap)
        for k in range(len(targets)):
            req = float(targets.req_time_s[k])
            for level, (lo, hi) in zip(levels, spans, strict=True):
                if hi[k] > lo[k]:  # the group's jobs that ended before t: the relevant ones
                    rows = self._relevant(ctx, level).rows(int(lo[k]), int(hi[k]), *relevant)
                    break
            else:
                yield [None, None, None], "none", 0, req
                continue
            n = rows.size
            h = np.maximum(ctx.run_s[rows], MIN_RUNTIME_S)
            if n not in rec:
                rec[n] = recency_weights(n, self.decay)
            w = rec[n]
            key = (id(ctx), level, int(lo[k]), int(hi[k]))  # the relevant jobs: a hint only
            parts: list[Pieces | None] = [None, None, None]
            if a > 0:
                parts[0] = self._pieces(h, w, (key, "a"))
            req_h = ctx.req_time_s[rows]
            if req > 0 and b > 0 and (req_h > 0).any():
                share = req_h > 0
                ws = w[share] / w[share].sum()
                parts[1] = self._pieces(h[share] / req_h[share] * req, ws, (key, "b"))
            g = gbm[k]
            if g.support > 0 and c > 0:
                q10, q90 = float(g.low_s[0]), float(g.high_s[0])
                q50 = min(max(float(g.point_s), q10), q90)
                parts[2] = lognormal_pieces(q10, q50, q90, self.ratio)
            yield parts, level, int(n), req

    def _fit_weights(
        self, ctx: RuntimeContext, targets: RuntimeTargets, quantile: QuantileGBRange,
        actual: np.ndarray,
    ) -> tuple[float, float, float]:  # fmt: skip
        """Maximum-likelihood weights of the three parts on the dev jobs (:mod:`.mix_weights`):
        each part's density at each dev job's actual runtime, then EM from ``weights``."""
        start = np.asarray(self.weights, dtype=float)
        parts = list(self._components(ctx, targets, quantile, (1.0, 1.0, 1.0)))
        dens = np.array(
            [[0.0 if pc is None else density_at(pc, float(r)) for pc in ps]
             for (ps, _, _, _), r in zip(parts, actual, strict=True)]
        ).reshape(len(parts), 3)  # fmt: skip
        a, b, c = em_weights(dens, start)
        return float(a), float(b), float(c)

    def _pieces(self, centres: np.ndarray, weights: np.ndarray, key: Hashable) -> Pieces:
        """:func:`.combined.pieces`, its edges' sort started from the order kept for the
        same relevant jobs (``key``): their edges again, or their used shares at another
        requested time, in nearly the same order. The order found is the stable sort's
        (:func:`.combined.stable_order`), so the pieces are the same floats either way. Below
        ``HINT_FROM`` jobs a plain sort is cheaper than the store's bookkeeping."""
        if centres.size < HINT_FROM:
            return pieces_ordered(centres, weights, self.ratio)[0]
        orders = kept_on(self, "_edge_orders", lambda: LRU[np.ndarray](max_bytes=ORDER_BYTES))
        pc, order = pieces_ordered(centres, weights, self.ratio, orders.get(key))
        order.setflags(write=False)  # shared by the requests' threads
        orders.put(key, order, order.nbytes)
        return pc

    def _relevant(self, ctx: RuntimeContext, level: str) -> RelevantHistory:
        """The level's :class:`RelevantHistory` (built at first use for the context's group
        index, kept beside the fitted model, not pickled): a target reads its relevant
        history, not its group's whole past (:mod:`.relevant`)."""
        kept = self.__dict__.setdefault("_relevant_kept", {})  # not a parameter
        index = ctx.levels[level]
        held = kept.get(level)
        if held is None or held[0] is not index or held[1] is not ctx.run_s:
            held = kept[level] = (index, ctx.run_s, RelevantHistory(index, ctx.run_s))
        return held[2]

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_relevant_kept", None)
        state.pop("_edge_orders", None)
        return state

    @staticmethod
    def _rangeset(pc: Pieces, level: str, support: int, lam: float, req: float) -> RangeSet:
        """The ranges of ``pc`` at density ``>= lam`` (the densest piece when none reaches it)."""
        upper = req if req > 0 else None
        low = high = mass = np.zeros(0)
        if pc.m.size:
            pieces_in = clipped(pc, upper)  # the densest piece's density and the selection
            low, high, mass = select_clipped(pieces_in, min(lam, pieces_in.top_density()))
        if level == "none" or mass.sum() <= 0:
            return RangeSet(
                np.array([MIN_RUNTIME_S]),
                np.array([max(req, MIN_RUNTIME_S)]),
                np.array([1.0]),
                level=level,
                support=support,
            )
        return RangeSet(low, high, mass / mass.sum(), level=level, support=support)

    def _predict(self, targets: RuntimeTargets, progress: Progress) -> RuntimePrediction:
        lams = self._levels(np.asarray(targets.n_before))
        mix = self._mixtures(self.history_, targets, self.quantile_)
        out = []
        step = max(len(mix) // 200, 1)
        for k, (pc, level, n, req) in enumerate(mix):
            out.append(self._rangeset(pc, level, n, float(lams[k]), req))
            if progress is not None and k % step == 0:
                progress(k / len(mix))
        return RuntimePrediction(out)


__all__ = ["DensityRangeSet", "LengthWindow", "length_table"]
