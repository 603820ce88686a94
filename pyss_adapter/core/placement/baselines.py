"""Naive placements to compare with (spec placement.md §2.5), all through the piece loop.

==================  ==========================================================
``first-fit``       lowest node id
``best-fit``        least free slots after the piece, then lowest id
``round-robin``     first candidate at or after a pointer (cyclic); pointer = n + 1
``random``          candidates by id, index floor(h(seed, job_id, piece, 0) * |F|)
``least-allocated`` Kubernetes' default NodeResourcesFit LeastAllocated score
==================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Sequence

from pyss_adapter.core.placement.base import ClusterPlacement
from pyss_adapter.core.placement.usage import h

__all__ = [
    "BestFit",
    "FirstFit",
    "LeastAllocated",
    "RandomFit",
    "RoundRobin",
    "least_allocated_score",
]


def least_allocated_score(
    capacity: Sequence[int], requested: Sequence[int], weights: Sequence[int] | None = None
) -> int:
    """Kubernetes LeastAllocated node score, integer arithmetic as in Go.

    Per resource r: ``floor((cap_r - req_r) * 100 / cap_r)``, 0 if ``req_r > cap_r`` or
    ``cap_r == 0`` (``req_r`` = already allocated + the pod). Node score:
    ``floor(sum w_r * score_r / sum w_r)``.
    """
    weights = [1] * len(capacity) if weights is None else list(weights)
    total = 0
    for cap, req, _w in zip(capacity, requested, weights, strict=True):
        score = 0 if cap == 0 or req > cap else (cap - req) * 100 // cap
        total += score * _w
    return total // sum(weights)


class FirstFit(ClusterPlacement):
    name = "first-fit"

    def choose(self, cands: list[int], j: int, remaining: int, piece: int, now: float) -> int:
        return cands[0]


class BestFit(ClusterPlacement):
    name = "best-fit"

    def choose(self, cands: list[int], j: int, remaining: int, piece: int, now: float) -> int:
        free = self.free
        return min(cands, key=lambda n: (max(free[n] - remaining, 0), n))


class RoundRobin(ClusterPlacement):
    name = "round-robin"

    def _setup(self) -> None:
        self.pointer = 0

    def choose(self, cands: list[int], j: int, remaining: int, piece: int, now: float) -> int:
        n_nodes = len(self.free)
        node = min(cands, key=lambda n: (n - self.pointer) % n_nodes)
        self.pointer = (node + 1) % n_nodes
        return node


class RandomFit(ClusterPlacement):
    name = "random"

    def choose(self, cands: list[int], j: int, remaining: int, piece: int, now: float) -> int:
        jid = int(self.engine.jobs.job_id[j])
        return cands[int(h(self.seed, jid, piece, 0) * len(cands))]


class LeastAllocated(ClusterPlacement):
    """CPU-only pods: the default scorer's other plugins score every node the same."""

    name = "least-allocated"

    def choose(self, cands: list[int], j: int, remaining: int, piece: int, now: float) -> int:
        cores, free = self.cores_list, self.free
        scores = []
        for n in cands:
            s = min(remaining, free[n])
            cap = cores[n] * 1000
            scores.append(least_allocated_score([cap], [(cores[n] - free[n] + s) * 1000]))
        return self.pick(cands, scores, j, piece)
