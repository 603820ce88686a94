"""Cluster placements on T3 nodes whose CPU credits slow jobs down (spec placement.md §2.4).

Node n holds pieces of running jobs; its nominal demand is ``D_n = sum s * u_j`` vCPU.
In standard mode a node with B_n = 0 and D_n > e runs at ``f_n = e / D_n``; a job runs
at ``v_j = min f_n`` over its nodes (bulk-synchronous ranks wait for the slowest) and
consumes ``s * u_j * v_j`` on each node. Each job keeps its remaining full-speed work
W_j; when v_j changes its end moves to ``now + W_j / v_j`` (``Engine.set_end``). A
bucket reaching 0 is an event (``Engine.wake_at``). ``credits="off"`` keeps the
bookkeeping but never throttles: every start and end stays as without placement.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pyss_adapter.core.placement.base import ClusterPlacement
from pyss_adapter.core.placement.baselines import FirstFit, RandomFit, RoundRobin
from pyss_adapter.core.placement.cash import (
    EMR_FEE_PER_H,
    INSTANCES,
    M5_PRICE,
    SURPLUS_PER_VCPU_H,
    cash_pieces,
)

__all__ = ["Cash", "T3FirstFit", "T3Random", "T3RoundRobin"]

HOUR_S = 3600.0
EPS = 1e-9


class CreditNodes(ClusterPlacement):
    """T3 credit bookkeeping shared by CASH and the credit-blind baselines."""

    def __init__(
        self,
        *,
        instance: str = "t3.2xlarge",
        t3_mode: str = "standard",
        t3_initial: str = "zero",
        credits: str = "on",
        price_t3: float | None = None,
        price_m5: float | None = None,
        price_emr: float = EMR_FEE_PER_H,
        price_surplus: float = SURPLUS_PER_VCPU_H,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        if instance not in INSTANCES:
            raise ValueError(f"instance must be one of {tuple(INSTANCES)}; got {instance!r}")
        for key, value, allowed in (
            ("t3_mode", t3_mode, ("standard", "unlimited")),
            ("t3_initial", t3_initial, ("zero", "full")),
            ("credits", credits, ("on", "off")),
        ):
            if value not in allowed:
                raise ValueError(f"{key} must be one of {allowed}; got {value!r}")
        self.instance, self.t3_mode, self.t3_initial, self.credits = (
            instance, t3_mode, t3_initial, credits,
        )  # fmt: skip
        vcpus, self.baseline, default_price = INSTANCES[instance]
        self.price_t3 = default_price if price_t3 is None else float(price_t3)
        self.price_m5 = M5_PRICE.get(instance, default_price) if price_m5 is None else price_m5
        self.price_emr, self.price_surplus = float(price_emr), float(price_surplus)
        self.changes_runtime = credits == "on" and t3_mode == "standard"

    def options(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "t3_mode": self.t3_mode,
            "t3_initial": self.t3_initial,
            "credits": self.credits,
            "price_t3": self.price_t3,
            "price_m5": self.price_m5,
            "price_emr": self.price_emr,
            "price_surplus": self.price_surplus,
            **super().options(),
        }

    def _setup(self) -> None:
        super()._setup()
        cores = self.cores.astype(np.float64)
        self.e = self.baseline * cores  # credits per minute
        self.cap = 24 * 60 * self.e
        self.B = self.cap.copy() if self.t3_initial == "full" else np.zeros(len(cores))
        self.B0 = self.B.copy()
        self.D = np.zeros(len(cores))
        self.use = np.zeros(len(cores))
        self.f = np.ones(len(cores))
        self.earned, self.consumed, self.discarded = (np.zeros(len(cores)) for _ in range(3))
        self.charged = 0.0
        self.on_node: list[dict[int, int]] = [{} for _ in cores]  # node -> {job: cores}
        self.work: dict[int, list[float]] = {}  # job -> [W left, speed, t of W]
        self.t0 = float(self.engine.jobs.submit_s[0]) if len(self.engine.jobs) else 0.0
        self.t = self.t0
        self.next_hour = self.t0 + HOUR_S
        self.sample_s = float(self.usage.sample_s)
        self.next_sample = self.t0
        self.samples_B: list[np.ndarray] = []
        self.samples_thr: list[np.ndarray] = []
        self.past_request = 0
        self.done = 0  # jobs finished; once all are, a stale wake-up samples nothing
        self._wakes: set[float] = set()

    # -- the clock ---------------------------------------------------------------
    def advance(self, engine: Any, now: float) -> None:
        while self.t < now:
            stop = min(now, self.next_hour) if self.t3_mode == "unlimited" else now
            self._sample_until(stop)
            self._flow(stop - self.t)
            self.t = stop
            if self.t3_mode == "unlimited" and stop == self.next_hour:
                billed = np.maximum(-self.cap - self.B, 0.0)
                self.charged += float(billed.sum())
                self.B += billed
                self.next_hour += HOUR_S
        if self.changes_runtime:
            self._retune(now, range(len(self.B)))

    def _flow(self, seconds: float) -> None:
        minutes = seconds / 60.0
        raw = self.B + (self.e - self.use) * minutes
        over = np.maximum(raw - self.cap, 0.0)
        under = np.maximum(-raw, 0.0) if self.t3_mode == "standard" else np.zeros_like(raw)
        self.earned += self.e * minutes
        self.consumed += self.use * minutes - under
        self.discarded += over
        self.B = raw - over + under

    def _sample_until(self, stop: float) -> None:
        """Balances and throttling at the grid instants in (t, stop], linear between events.

        Nothing is sampled once every job has finished: a wake-up left from a superseded
        credit-exhaustion instant may lie far beyond the last end (the grid ends there).
        """
        if self.next_sample > stop or self.done >= len(self.engine.jobs):
            return
        count = int((stop - self.next_sample) // self.sample_s) + 1
        times = self.next_sample + self.sample_s * np.arange(count)
        floor = 0.0 if self.t3_mode == "standard" else -np.inf
        rate = (self.e - self.use) / 60.0
        b = np.clip(self.B[None, :] + rate[None, :] * (times - self.t)[:, None], floor, self.cap)
        self.samples_B.extend(b)
        thr = self.f < 1.0
        self.samples_thr.extend([thr] * count)
        self.next_sample = float(times[-1]) + self.sample_s

    # -- throttling --------------------------------------------------------------
    def _retune(self, now: float, nodes: Any) -> None:
        """Re-derive f on ``nodes``; move the ends of the jobs whose speed changed."""
        changed = set()
        for n in nodes:
            D, e = self.D[n], self.e[n]
            # On when the bucket is empty and demand exceeds the baseline; off only when a
            # start or an end brings demand to the baseline (credits a throttled node gains
            # because a job is held back elsewhere do not flap it on and off).
            throttled = D > e + EPS and (self.B[n] <= EPS or self.f[n] < 1.0)
            f = e / D if throttled else 1.0
            if f != self.f[n]:
                self.f[n] = f
                changed.add(n)
        jobs = {j for n in changed for j in self.on_node[n]}
        touched = set(changed)
        for j in jobs:
            touched.update(self._respeed(j, now))
        for n in touched:
            self.use[n] = sum(
                s * self.usage.u[j] * self.work[j][1] for j, s in self.on_node[n].items()
            )
        self._wake_on_empty(now, touched)

    def _respeed(self, j: int, now: float) -> list[int]:
        nodes = [self.log.node[i] for i in self.pieces[j]]
        v = min(self.f[n] for n in nodes)
        w = self.work[j]
        engine = self.engine
        if engine.start_s[j] + engine.runtime[j] <= now and engine.start_s[j] < now:
            return nodes  # it ends now: its termination is being handled
        if v != w[1]:
            w[0] -= (now - w[2]) * w[1]
            w[1], w[2] = v, now
            self.engine.set_end(j, now + max(w[0], 0.0) / v)
        return nodes

    def _wake_on_empty(self, now: float, nodes: Any) -> None:
        for n in nodes:
            if self.B[n] > EPS and self.use[n] > self.e[n] + EPS:
                t = now + 60.0 * self.B[n] / (self.use[n] - self.e[n])
                if t > now and t not in self._wakes:
                    self._wakes.add(t)
                    self.engine.wake_at(t)

    # -- jobs --------------------------------------------------------------------
    def on_start(self, engine: Any, j: int, now: float) -> None:
        self.advance(engine, now)
        self.work[j] = [float(engine.runtime[j]), 1.0, now]
        super().on_start(engine, j, now)
        nodes = [self.log.node[i] for i in self.pieces[j]]
        for n in nodes:
            self.use[n] += self.on_node[n][j] * self.usage.u[j]
        if self.changes_runtime:
            self._retune(now, nodes)
            self._respeed(j, now)
            for n in nodes:
                self.use[n] = sum(
                    s * self.usage.u[k] * self.work[k][1] for k, s in self.on_node[n].items()
                )
            self._wake_on_empty(now, nodes)

    def placed(self, j: int, n: int, s: int, rank0: int, now: float) -> None:
        self.on_node[n][j] = self.on_node[n].get(j, 0) + s
        self.D[n] += s * self.usage.u[j]

    def on_finish(self, engine: Any, j: int, now: float) -> None:
        self.advance(engine, now)
        nodes = [self.log.node[i] for i in self.pieces[j]]
        w = self.work.pop(j)
        for n in set(nodes):
            s = self.on_node[n].pop(j)
            self.D[n] -= s * self.usage.u[j]
            self.use[n] -= s * self.usage.u[j] * w[1]
            if not self.on_node[n]:
                self.D[n] = self.use[n] = 0.0  # no float residue on an idle node
        if now - engine.start_s[j] > engine.requested[j] + EPS:
            self.past_request += 1
        self.done += 1
        super().on_finish(engine, j, now)
        if self.changes_runtime:
            self._retune(now, set(nodes))

    # -- results -----------------------------------------------------------------
    def extra_metrics(self) -> dict[str, Any]:
        ends = [t for t in self.log.t_off if t == t]
        last_end = max(ends, default=self.t0)
        span_h = max(last_end - self.t0, 0.0) / HOUR_S  # a late wake-up does not bill
        if self.t3_mode == "unlimited":
            self.charged += float(np.maximum(-self.B, 0.0).sum())
        nodes = len(self.cores_list)
        surplus = self.charged * self.price_surplus / 60.0
        keep = int((last_end - self.t0) // self.sample_s) + 1  # grid up to the last end
        B = np.asarray(self.samples_B[:keep]) if self.samples_B else np.zeros((1, nodes))
        thr = np.asarray(self.samples_thr[:keep]) if self.samples_thr else np.zeros((1, nodes))
        return {
            "cost_usd": float(nodes * span_h * self.price_t3 + surplus),
            "cost_m5_emr_usd": float(nodes * span_h * (self.price_m5 + self.price_emr)),
            "surplus_usd": float(surplus),
            "credit_std_mean": float(B.std(axis=1).mean()),
            "credit_mean": float(B.mean()),
            "throttled_share": float(thr.mean()),
            "jobs_past_request": self.past_request,
            "credit_balance_error": float(
                np.max(np.abs(self.earned - self.consumed - self.discarded - (self.B - self.B0)))
            ),
        }

    def credit_series(self) -> tuple[np.ndarray, float]:
        return (np.asarray(self.samples_B) if self.samples_B else np.zeros((0, 0))), self.t0


class Cash(CreditNodes):
    """CASH: burst jobs (mu_hat >= theta) to the nodes with the most credits."""

    name = "cash"

    def __init__(self, *, theta: float | None = None, cash_refresh_s: float = 60.0, **kw: Any):
        super().__init__(**kw)
        self.theta = self.baseline if theta is None else float(theta)
        self.refresh_s = float(cash_refresh_s)
        if self.refresh_s <= 0:
            raise ValueError(f"cash_refresh_s must be > 0; got {cash_refresh_s}")

    def options(self) -> dict[str, Any]:
        return {"theta": self.theta, "cash_refresh_s": self.refresh_s, **super().options()}

    def _setup(self) -> None:
        super()._setup()
        self._sorted_at = -math.inf
        self._credits: list[float] = []

    def _order_credits(self, now: float) -> list[float]:
        """Balances as sorted by the refresh thread: taken at the first placement after
        each refresh instant ``t0 + refresh_s * k``."""
        instant = self.t0 + self.refresh_s * math.floor((now - self.t0) / self.refresh_s)
        if instant > self._sorted_at:
            self._sorted_at = instant
            self._credits = self.B.tolist()
        return self._credits

    def on_start_pieces(self, j: int, now: float) -> list[tuple[int, int]]:
        kind = "burst" if self.know.mu(j) >= self.theta else "other"
        return cash_pieces(
            self._order_credits(now), self.free, self.engine.procs[j], kind, self.whole_first
        )

    def on_start(self, engine: Any, j: int, now: float) -> None:
        # CASH forms its own pieces (its phases), then the shared bookkeeping follows.
        self._plan = iter(self.on_start_pieces(j, now))
        super().on_start(engine, j, now)

    def choose(self, cands: list[int], j: int, remaining: int, piece: int, now: float) -> int:
        n, _ = next(self._plan)
        return n

    def candidates(self, remaining: int) -> list[int]:
        return [0]  # CASH's plan decides; the piece loop only takes min(remaining, free)


class T3RoundRobin(CreditNodes, RoundRobin):
    name = "t3-round-robin"


class T3Random(CreditNodes, RandomFit):
    name = "t3-random"


class T3FirstFit(CreditNodes, FirstFit):
    name = "t3-first-fit"
