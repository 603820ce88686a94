"""Trimaran's real-load-aware scores: TargetLoadPacking and LoadVariationRiskBalancing
(seed ``003_a26213ce0cdc024b.txt``; spec placement.md §2.3).

A piece of s cores is a Guaranteed pod: request = limit = ``s * 1000`` millicores.

TargetLoadPacking, target X (default 40)::

    U = 100 * (node_used_m + pod_m + missing_m) / capacity_m
    U > X:   score = 0 if U > 100 else round(X * (100 - U) / (100 - X))
    U <= X:  score = round((100 - X) * U / X + X)

LoadVariationRiskBalancing, margin m, sensitivity s (defaults 1, 1)::

    mu = clamp01((UsedAvg + Req) / Cap);  sigma = clamp01(UsedStdev / Cap)
    sigma = sigma^(1/s) (s > 0); 0 if sigma < 1 else 1 (s == 0); unchanged (s < 0)
    sigma = clamp01(sigma * m);  score = (1 - (mu + sigma) / 2) * 100

``round`` is Go's ``math.Round`` (:func:`go_round`). The load watcher is modelled as
samples of each node's use every 60 s over the last 15 minutes (AVG, population STD).
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from pyss_adapter.core.placement.base import ClusterPlacement, go_round

__all__ = [
    "LoadWatcher",
    "LoadVariationRiskBalancing",
    "TargetLoadPacking",
    "lvrb_node_score",
    "lvrb_score",
    "predict_utilisation",
    "tlp_score",
]

DEFAULT_REQUEST_MULTIPLIER = 1.5
DEFAULT_REQUEST_MILLICORES = 1000
WINDOW = 15
STEP_S = 60.0


def tlp_score(u_pct: float, target: float = 40) -> int:
    """TargetLoadPacking score of a node whose use with the pod would be ``u_pct`` %."""
    if target <= 0:
        target = 40
    if u_pct > target:
        return 0 if u_pct > 100 else go_round(target * (100 - u_pct) / (100 - target))
    return go_round((100 - target) * u_pct / target + target)


def predict_utilisation(containers: list[dict[str, float]], overhead_m: float = 0.0) -> float:
    """A pod's predicted CPU (millicores): per container its limit, else 1.5 x request,
    else 1000 m; summed (init containers excluded), plus the pod overhead."""
    total = 0.0
    for c in containers:
        if c.get("limit"):
            total += c["limit"]
        elif c.get("request"):
            total += go_round(c["request"] * DEFAULT_REQUEST_MULTIPLIER)
        else:
            total += DEFAULT_REQUEST_MILLICORES
    return total + overhead_m


def _clamp01(x: float) -> float:
    return min(max(x, 0.0), 1.0)


def lvrb_score(
    req: float, cap: float, used_avg: float, used_std: float, margin: float = 1, sens: float = 1
) -> float:
    """LVRB risk score of one resource (a float in [0, 100]; absolute units)."""
    if cap <= 0:
        return 0.0
    req = max(req, 0.0)
    used_avg = min(max(used_avg, 0.0), cap)
    used_std = min(max(used_std, 0.0), cap)
    mu = _clamp01((used_avg + req) / cap)
    sigma = _clamp01(used_std / cap)
    if sens > 0:
        sigma = sigma ** (1.0 / sens)
    elif sens == 0:
        sigma = 0.0 if sigma < 1 else 1.0
    sigma = _clamp01(sigma * margin)
    return (1.0 - (mu + sigma) / 2.0) * 100.0


def lvrb_node_score(
    cpu: tuple[float, float, float, float] | None,
    mem: tuple[float, float, float, float] | None = None,
    margin: float = 1,
    sens: float = 1,
) -> int:
    """Node score: each resource ``(req, cap, avg_pct, std_pct)`` or None (no metrics).

    ``round(min(cpu, mem))`` when both have metrics, else the one that has; 0 if none.
    """
    scores = []
    for res in (cpu, mem):
        if res is not None:
            req, cap, avg_pct, std_pct = res
            scores.append(
                lvrb_score(req, cap, avg_pct * cap / 100, std_pct * cap / 100, margin, sens)
            )
    return go_round(min(scores)) if scores else 0


class LoadWatcher:
    """Per-node CPU use sampled every 60 s; AVG and STD (% of cores) of the last 15 samples.

    The samples of minute boundaries in (previous clock, now] hold the use before the
    events of ``now``: what a metrics scrape at that instant would have seen.
    """

    def __init__(self, usage: Any, cores: np.ndarray, t0: float) -> None:
        self.usage = usage
        self.cores = cores.astype(np.float64)
        self.t0 = float(t0)
        self.use = np.zeros(len(cores))
        self.pieces: dict[int, tuple[int, int, int, int]] = {}
        self.value: dict[int, float] = {}
        self.samples: deque[np.ndarray] = deque(maxlen=WINDOW)
        self.mem = np.zeros(len(cores))  # KB in use per node: sum of pieces' s * m_j
        self.mem_kb: np.ndarray | None = None  # m_j (KB per core), set to watch memory
        self.mem_samples: deque[np.ndarray] = deque(maxlen=WINDOW)
        self.last_minute = -(1 << 62)
        self.block = 0
        self._varies = usage.model != "constant"
        self._cache: tuple[int, np.ndarray, np.ndarray] | None = None

    def _piece_value(self, j: int, s: int, rank0: int, k: int) -> float:
        if not self._varies:
            return s * float(self.usage.u[j])
        return float(self.usage.ranks_use(j, np.arange(rank0, rank0 + s), k).sum())

    def _set_block(self, k: int) -> None:
        if k == self.block or not self._varies:
            self.block = k
            return
        self.block = k
        self.use[:] = 0.0
        for pid, (j, n, s, rank0) in self.pieces.items():
            v = self._piece_value(j, s, rank0, k)
            self.value[pid] = v
            self.use[n] += v

    def advance(self, now: float) -> None:
        minute = int(math.floor((now - self.t0) / STEP_S))
        if minute <= self.last_minute:
            return
        first = max(self.last_minute + 1, minute - WINDOW + 1)
        for m in range(first, minute + 1):
            self._set_block(self.usage.block(self.t0 + STEP_S * m))
            self.samples.append(self.use.copy())
            if self.mem_kb is not None:
                self.mem_samples.append(self.mem.copy())
        self.last_minute = minute
        self._set_block(self.usage.block(now))

    def add(self, pid: int, j: int, n: int, s: int, rank0: int) -> None:
        v = self._piece_value(j, s, rank0, self.block)
        self.pieces[pid] = (j, n, s, rank0)
        self.value[pid] = v
        self.use[n] += v
        if self.mem_kb is not None:
            self.mem[n] += s * self.piece_mem(j)

    def piece_mem(self, j: int) -> float:
        """KB per core of job j: f7, or 0 when the log does not give it."""
        m = float(self.mem_kb[j]) if self.mem_kb is not None else math.nan
        return m if m == m else 0.0

    def remove(self, pid: int) -> None:
        j, n, s, rank0 = self.pieces.pop(pid)
        self.use[n] -= self.value.pop(pid)
        if self.mem_kb is not None:
            self.mem[n] -= s * self.piece_mem(j)
        if not self.pieces:
            self.use[:] = 0.0  # no float residue on an idle machine
            self.mem[:] = 0.0

    def stats(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        """(AVG %, STD %) per node at the last refresh instant."""
        self.advance(now)
        if self._cache is not None and self._cache[0] == self.last_minute:
            return self._cache[1], self._cache[2]
        if self.samples:
            stack = np.stack(self.samples)
            avg, std = stack.mean(axis=0), stack.std(axis=0)
        else:
            avg, std = self.use.copy(), np.zeros_like(self.use)
        avg, std = 100.0 * avg / self.cores, 100.0 * std / self.cores
        self._cache = (self.last_minute, avg, std)
        return avg, std

    def mem_stats(self, cap_kb: float) -> tuple[np.ndarray, np.ndarray]:
        """(AVG %, STD %) of each node's memory over the same window (call after stats)."""
        if self.mem_samples:
            stack = np.stack(self.mem_samples)
            avg, std = stack.mean(axis=0), stack.std(axis=0)
        else:
            avg, std = self.mem.copy(), np.zeros_like(self.mem)
        return 100.0 * avg / cap_kb, 100.0 * std / cap_kb


class _Watched(ClusterPlacement):
    def _setup(self) -> None:
        t0 = float(self.engine.jobs.submit_s[0]) if len(self.engine.jobs) else 0.0
        self.watch = LoadWatcher(self.usage, self.cores, t0)

    def advance(self, engine: Any, now: float) -> None:
        self.watch.advance(now)

    def placed(self, j: int, n: int, s: int, rank0: int, now: float) -> None:
        self.watch.add(len(self.log.job) - 1, j, n, s, rank0)

    def on_finish(self, engine: Any, j: int, now: float) -> None:
        for i in self.pieces.get(j, ()):
            self.watch.remove(i)
        super().on_finish(engine, j, now)


class TargetLoadPacking(_Watched):
    name = "tlp"

    def __init__(self, *, target: float = 40, **kw: Any) -> None:
        super().__init__(**kw)
        self.target = float(target) if float(target) > 0 else 40.0

    def options(self) -> dict[str, Any]:
        return {"target": self.target, **super().options()}

    def _setup(self) -> None:
        super()._setup()
        self.binds: list[deque[tuple[float, float]]] = [deque() for _ in self.cores_list]

    def choose(self, cands: list[int], j: int, remaining: int, piece: int, now: float) -> int:
        avg, _ = self.watch.stats(now)
        t_w = self.watch.t0 + STEP_S * self.watch.last_minute
        cores, free, target = self.cores_list, self.free, self.target
        scores = []
        for n in cands:
            binds = self.binds[n]
            while binds and binds[0][0] <= t_w - STEP_S:
                binds.popleft()
            missing = sum(c for _, c in binds)
            pod = min(remaining, free[n])
            u = avg[n] + 100.0 * (pod + missing) / cores[n]
            scores.append(tlp_score(u, target))
        return self.pick(cands, scores, j, piece)

    def placed(self, j: int, n: int, s: int, rank0: int, now: float) -> None:
        super().placed(j, n, s, rank0, now)
        self.binds[n].append((now, float(s)))


class LoadVariationRiskBalancing(_Watched):
    """LVRB (spec §2.3): CPU only by default; with ``node_mem_kb`` and a log whose field 7
    is given for at least half of the jobs, the node score is ``round(min(cpu, mem))``,
    memory use per node being the sum over its pieces of s * m_j (m_j = f7 in KB per
    core; 0 for a job without it). Otherwise memory stays off and the block says why."""

    name = "lvrb"

    def __init__(
        self, *, margin: float = 1, sensitivity: float = 1, node_mem_kb: float = 0, **kw: Any
    ) -> None:
        super().__init__(**kw)
        # Negative arguments reset to the defaults at configuration time only.
        self.margin = float(margin) if float(margin) >= 0 else 1.0
        self.sensitivity = float(sensitivity) if float(sensitivity) >= 0 else 1.0
        if float(node_mem_kb) < 0:
            raise ValueError(f"node_mem_kb must be >= 0; got {node_mem_kb}")
        self.node_mem_kb = float(node_mem_kb)
        self.memory = "off" if not self.node_mem_kb else "on"

    def options(self) -> dict[str, Any]:
        extra = {"node_mem_kb": self.node_mem_kb, "memory": self.memory}
        return {"margin": self.margin, "sensitivity": self.sensitivity, **extra,
                **super().options()}  # fmt: skip

    def _setup(self) -> None:
        super()._setup()
        if not self.node_mem_kb:
            return
        mem = getattr(self.engine.jobs, "mem_kb", None)
        given = 0.0 if mem is None or not len(mem) else float(np.mean(np.asarray(mem) > 0))
        if given < 0.5:
            self.memory = f"off: field 7 given for {100 * given:.0f}% of jobs (< 50%)"
            return
        self.watch.mem_kb = np.asarray(mem, dtype=np.float64)

    def choose(self, cands: list[int], j: int, remaining: int, piece: int, now: float) -> int:
        avg, std = self.watch.stats(now)
        watch_mem = self.watch.mem_kb is not None
        if watch_mem:
            mavg, mstd = self.watch.mem_stats(self.node_mem_kb)
        cores, free = self.cores_list, self.free
        scores = []
        for n in cands:
            cap = cores[n] * 1000.0
            s = min(remaining, free[n])
            cpu = (s * 1000.0, cap, float(avg[n]), float(std[n]))
            mem = None
            if watch_mem:
                req = s * self.watch.piece_mem(j)
                mem = (req, self.node_mem_kb, float(mavg[n]), float(mstd[n]))
            scores.append(lvrb_node_score(cpu, mem, self.margin, self.sensitivity))
        return self.pick(cands, scores, j, piece)
