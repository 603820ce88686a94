"""GPA and its estimators in replays: the ``pool`` framing (placement.md §2.2, "Replay variant").

Every allocated processor is a rank item with (mu_hat, sigma_hat) of its job (§1.5),
placed at job start by First Fit or Best Fit into identical nodes of ``pool_cores``
cores opened on demand (lowest free id) and closed when empty. Items leave at job
end; no rebalancing (it would need migration). The ranks of one job are identical
items, so a node takes as many as pass its fit test before the next is tried: the
same nodes as placing them one by one (Best Fit keeps choosing the node it just
filled, whose residual only shrank).
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np
from scipy.special import ndtri

from pyss_adapter.core.placement.base import PlacementLog
from pyss_adapter.core.placement.gpa import TOL, Estimator
from pyss_adapter.core.placement.usage import Knowledge, UsageModel, beta_quantile

__all__ = ["PoolPlacement"]


class PoolPlacement:
    """Online bin packing of rank items with one :class:`Estimator` (``fit``: first | best)."""

    framing = "pool"
    changes_runtime = False

    def __init__(
        self,
        kind: str,
        param: float = 0.0,
        *,
        name: str,
        fit: str = "first",
        pool_cores: int = 32,
        seed: int = 0,
    ) -> None:
        if fit not in ("first", "best"):
            raise ValueError(f"fit must be first or best; got {fit!r}")
        if int(pool_cores) < 1:
            raise ValueError(f"pool_cores must be >= 1; got {pool_cores}")
        self.name = name
        self.estimator = Estimator(kind, float(param))
        self.fit = fit
        self.pool_cores = int(pool_cores)
        self.seed = int(seed)

    def options(self) -> dict[str, Any]:
        key = {"gpa": "rho", "cantelli": "b", "av": "f", "perc": "p"}.get(self.estimator.kind)
        out: dict[str, Any] = {"fit": self.fit, "pool_cores": self.pool_cores}
        if key:
            out[key] = self.estimator.param
        return out

    def bind(
        self, engine: Any, usage: UsageModel, cores_per_node: int = 8, source: str = ""
    ) -> None:
        self.engine = engine
        self.usage = usage
        self.know = Knowledge(usage, engine.jobs.user_id)
        self.log = PlacementLog()
        self.sums: list[list[float]] = []  # per node: sum mu, sum var, sum perc, count
        self.closed: list[int] = []  # free node ids (heap)
        self.pieces: dict[int, list[int]] = {}
        self.max_open = 0
        self.placed_item: dict[int, tuple[float, float, float]] = {}

    def _item(self, j: int) -> tuple[float, float, float]:
        mu = self.know.mu(j)
        sigma = self.know.sigma(j)
        perc = mu
        est = self.estimator
        if est.kind == "perc" and self.usage.model == "beta":
            perc = float(
                beta_quantile(np.array([mu]), self.usage.rho, np.array([est.param / 100]))[0]
            )
        elif est.kind == "perc" and sigma > 0:  # azure: a normal approximation
            perc = min(1.0, mu + float(ndtri(est.param / 100)) * sigma)
        return mu, sigma * sigma, perc

    def _max_fit(self, s: list[float], item: tuple[float, float, float], limit: int) -> int:
        """How many copies of ``item`` node ``s`` still takes (at most ``limit``)."""
        size, c = self.estimator.size, self.pool_cores + TOL

        def ok(k: int) -> bool:
            return size(s[0] + k * item[0], s[1] + k * item[1], s[2] + k * item[2], s[3] + k) <= c

        if not ok(1):
            return 0
        lo, hi = 1, limit
        while lo < hi:  # the size grows with k: bisect the last k that passes
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
        return lo

    def _open(self) -> int:
        if self.closed:
            n = heapq.heappop(self.closed)
            self.sums[n] = [0.0, 0.0, 0.0, 0.0]
        else:
            self.sums.append([0.0, 0.0, 0.0, 0.0])
            n = len(self.sums) - 1
        return n

    def on_start(self, engine: Any, j: int, now: float) -> None:
        remaining = engine.procs[j]
        item = self._item(j)
        self.placed_item[j] = item
        ids, rank0 = [], 0
        closed = set(self.closed)
        while remaining > 0:
            best, best_k, best_res = -1, 0, np.inf
            for n, s in enumerate(self.sums):
                if n in closed:
                    continue
                k = self._max_fit(s, item, remaining)
                if k == 0:
                    continue
                if self.fit == "first":
                    best, best_k = n, k
                    break
                one = self.estimator.size(s[0] + item[0], s[1] + item[1], s[2] + item[2], s[3] + 1)
                if self.pool_cores - one < best_res:
                    best, best_k, best_res = n, k, self.pool_cores - one
            if best < 0:
                best = self._open()
                closed.discard(best)
                best_k = max(1, self._max_fit(self.sums[best], item, remaining))
            s = self.sums[best]
            k = best_k
            self.sums[best] = [s[0] + k * item[0], s[1] + k * item[1], s[2] + k * item[2], s[3] + k]
            ids.append(self.log.add(j, best, k, rank0, now))
            rank0 += k
            remaining -= k
        self.pieces[j] = ids
        self.max_open = max(self.max_open, len(self.sums) - len(self.closed))

    def on_finish(self, engine: Any, j: int, now: float) -> None:
        log = self.log
        item = self.placed_item[j]  # as placed: history knowledge moves on meanwhile
        for i in self.pieces.pop(j):
            n, k = log.node[i], log.cores[i]
            s = self.sums[n]
            self.sums[n] = [s[0] - k * item[0], s[1] - k * item[1], s[2] - k * item[2], s[3] - k]
            log.t_off[i] = now
            if self.sums[n][3] <= 0:
                heapq.heappush(self.closed, n)
        self.know.finished(j)

    def cluster_info(self) -> dict[str, Any]:
        return {"pool_cores": self.pool_cores, "max_open_nodes": self.max_open}

    def result(self) -> dict[str, Any]:
        from pyss_adapter.core.placement.metrics import pool_block

        return pool_block(self)
