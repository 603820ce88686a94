"""The placement contract and the node layer under the engine (spec placement.md §1.1, §1.2, §4.2).

``cluster`` framing: ``floor(P/C)`` nodes of C cores plus one of ``P mod C``; a core is
held by at most one job. A job of p processors becomes pieces (node, cores) by the
piece loop::

    remaining = p
    while remaining > 0:
        F = {n : free_n >= remaining}          (whole_first; else / if empty: free_n >= 1)
        n* = policy.choose(F, j, remaining)    (score or order, lowest id on ties)
        s = min(remaining, free_n*); free_n* -= s; remaining -= s

EASY starts a job only when ``free >= p`` and the free slots sum to ``engine.free``,
so the loop cannot fail (a recorded schedule over the machine size raises
:class:`PlacementError`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from pyss_adapter.core.placement.usage import Knowledge, UsageModel, h

__all__ = [
    "ClusterPlacement",
    "Placement",
    "PlacementError",
    "PlacementLog",
    "go_round",
    "node_cores",
]

TIES = ("lowest-id", "random")


class PlacementError(RuntimeError):
    """A job could not be placed (names the job)."""


class Placement(Protocol):
    name: str
    framing: str
    changes_runtime: bool
    log: PlacementLog

    def bind(self, engine: Any, usage: UsageModel, cores_per_node: int, source: str) -> None: ...
    def on_start(self, engine: Any, j: int, now: float) -> None: ...
    def on_finish(self, engine: Any, j: int, now: float) -> None: ...
    def result(self) -> dict: ...


def go_round(x: float) -> int:
    """Go's ``math.Round``: half away from zero (Python's ``round`` halves to even)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def node_cores(machine_procs: int, cores_per_node: int) -> np.ndarray:
    """``floor(P/C)`` nodes of C cores, plus one of ``P mod C`` if non-zero (sum = P)."""
    full, rest = divmod(int(machine_procs), int(cores_per_node))
    cores = [int(cores_per_node)] * full + ([rest] if rest else [])
    return np.asarray(cores, dtype=np.int64)


DEFAULT_CORES_PER_NODE = 8


def resolve_cores_per_node(
    given: int | None, max_procs: int | None, max_nodes: int | None
) -> tuple[int, str]:
    """C and where it came from: given; else header MaxProcs/MaxNodes when an integer
    >= 2; else 8 ("virtual": the shared logs all have a ratio of 1)."""
    if given is not None:
        if int(given) < 1:
            raise ValueError(f"cores_per_node must be >= 1; got {given}")
        return int(given), "given"
    if max_procs and max_nodes and max_procs % max_nodes == 0 and max_procs // max_nodes >= 2:
        return int(max_procs // max_nodes), "header"
    return DEFAULT_CORES_PER_NODE, "virtual"


class PlacementLog:
    """Every piece ever placed: job index, node, cores, first rank, on and off times (s)."""

    def __init__(self) -> None:
        self.job: list[int] = []
        self.node: list[int] = []
        self.cores: list[int] = []
        self.rank0: list[int] = []
        self.t_on: list[float] = []
        self.t_off: list[float] = []

    def add(self, j: int, n: int, s: int, rank0: int, now: float) -> int:
        self.job.append(j)
        self.node.append(n)
        self.cores.append(s)
        self.rank0.append(rank0)
        self.t_on.append(now)
        self.t_off.append(math.nan)
        return len(self.job) - 1

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "job": np.asarray(self.job, np.int64),
            "node": np.asarray(self.node, np.int64),
            "cores": np.asarray(self.cores, np.int64),
            "rank0": np.asarray(self.rank0, np.int64),
            "t_on": np.asarray(self.t_on, np.float64),
            "t_off": np.asarray(self.t_off, np.float64),
        }


class ClusterPlacement:
    """Shared machinery of the cluster policies: nodes, free slots, the piece loop.

    Subclasses implement ``choose(cands, j, remaining, piece, now) -> node``.
    Options: ``tie`` ("lowest-id" | "random"), ``whole_first`` (bool), ``seed``.
    """

    name = "cluster"
    framing = "cluster"
    changes_runtime = False

    def __init__(self, *, tie: str = "lowest-id", whole_first: bool = True, seed: int = 0) -> None:
        if tie not in TIES:
            raise ValueError(f"tie must be one of {TIES}; got {tie!r}")
        self.tie = tie
        self.whole_first = bool(whole_first)
        self.seed = int(seed)

    def options(self) -> dict[str, Any]:
        return {"tie": self.tie, "whole_first": self.whole_first}

    def bind(
        self, engine: Any, usage: UsageModel, cores_per_node: int = 8, source: str = "given"
    ) -> None:
        self.engine = engine
        self.usage = usage
        self.know = Knowledge(usage, engine.jobs.user_id)
        self.cores = node_cores(engine.machine_procs, cores_per_node)
        self.cores_list: list[int] = self.cores.tolist()
        self.free: list[int] = list(self.cores_list)
        self.cores_per_node = int(cores_per_node)
        self.source = source
        self.log = PlacementLog()
        self.pieces: dict[int, list[int]] = {}
        self._setup()

    def _setup(self) -> None:
        """Per-policy state built once the nodes exist."""

    def choose(self, cands: list[int], j: int, remaining: int, piece: int, now: float) -> int:
        raise NotImplementedError

    def pick(self, cands: list[int], scores: Sequence[float], j: int, piece: int) -> int:
        """The highest score; ties to the lowest id, or at random with ``tie=random``."""
        best = max(scores)
        ties = [n for n, s in zip(cands, scores, strict=True) if s == best]
        if self.tie == "random" and len(ties) > 1:
            return ties[int(h(self.seed, int(self.engine.jobs.job_id[j]), piece, 7) * len(ties))]
        return ties[0]

    def candidates(self, remaining: int) -> list[int]:
        free = self.free
        if self.whole_first:
            whole = [n for n, f in enumerate(free) if f >= remaining]
            if whole:
                return whole
        return [n for n, f in enumerate(free) if f >= 1]

    def on_start(self, engine: Any, j: int, now: float) -> None:
        remaining = engine.procs[j]
        free, ids, rank0, piece = self.free, [], 0, 0
        while remaining > 0:
            cands = self.candidates(remaining)
            if not cands:
                raise PlacementError(
                    f"job {int(engine.jobs.job_id[j])} needs {remaining} more processors and "
                    f"no node has a free core: the schedule runs over the machine size"
                )
            n = self.choose(cands, j, remaining, piece, now)
            s = min(remaining, free[n])
            free[n] -= s
            remaining -= s
            ids.append(self.log.add(j, n, s, rank0, now))
            self.placed(j, n, s, rank0, now)
            rank0 += s
            piece += 1
        self.pieces[j] = ids

    def placed(self, j: int, n: int, s: int, rank0: int, now: float) -> None:
        """Hook: a piece was placed (Trimaran's load watcher, CASH's demand)."""

    def on_finish(self, engine: Any, j: int, now: float) -> None:
        log = self.log
        for i in self.pieces.pop(j):
            self.free[log.node[i]] += log.cores[i]
            log.t_off[i] = now
            self.removed(j, log.node[i], log.cores[i], log.rank0[i], now)
        self.know.finished(j)

    def removed(self, j: int, n: int, s: int, rank0: int, now: float) -> None:
        """Hook: a piece was freed."""

    def cluster_info(self) -> dict[str, Any]:
        return {
            "nodes": len(self.cores_list),
            "cores_per_node": self.cores_per_node,
            "last_node_cores": self.cores_list[-1],
            "source": self.source,
        }

    def extra_metrics(self) -> dict[str, Any]:
        return {}

    def result(self) -> dict[str, Any]:
        from pyss_adapter.core.placement.metrics import cluster_block

        return cluster_block(self)
