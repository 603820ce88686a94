"""GPA: Gaussian Percentile Approximation, and the estimators it is compared with
(seed ``000_fd000e33d6d7f316.txt`` §3-§5; spec placement.md §2.2).

Item i has mean mu_i and standard deviation sigma_i (population std over the
observation set). It fits machine S of capacity c when size(S u {i}) <= c + 1e-9::

    gpa rho        sum mu + z_rho * sqrt(sum sigma^2),  z_rho = Phi^-1(1 - rho)
    cantelli b     sum mu + b * sqrt(sum sigma^2)       (P[X > mu + b sigma] < 1/(1+b^2))
    av f           f * sum mu
    perc p         sum of the items' p-th percentiles
    slots          number of items (each item takes one unit)

Bin packing takes the items in order: First Fit puts an item into the lowest-id
machine that passes, Best Fit into the passing machine with the least residual
``c - size`` (ties: lowest id); a new machine opens when none passes.

Metrics (seed §5): ``m = m_abs / m_norm`` with ``m_norm = ceil(sum_i mean(x_i) / c)``;
``q = (1 / (m_abs |E|)) sum_machines sum_{t in E} [sum_{i in S} x_i[t] > c]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

__all__ = ["ESTIMATORS", "Estimator", "m_q", "pack", "rebalance"]

ESTIMATORS = ("gpa", "cantelli", "av", "perc", "slots")
TOL = 1e-9


@dataclass(frozen=True)
class Estimator:
    """A fit test: ``kind`` in :data:`ESTIMATORS` and its parameter (rho, b, f or p)."""

    kind: str
    param: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}; got {self.kind!r}")
        if self.kind == "gpa" and not 0 < self.param < 1:
            raise ValueError(f"gpa rho must be in (0, 1); got {self.param}")
        if self.kind == "perc" and not 0 <= self.param <= 100:
            raise ValueError(f"perc p must be in [0, 100]; got {self.param}")
        if self.kind in ("cantelli", "av") and self.param < 0:
            raise ValueError(f"{self.kind} parameter must be >= 0; got {self.param}")

    @property
    def label(self) -> str:
        return self.kind if self.kind == "slots" else f"{self.kind} {self.param:g}"

    @property
    def z(self) -> float:
        """The multiplier of sqrt(sum sigma^2): z_rho for gpa, b for cantelli."""
        if self.kind == "gpa":
            return float(ndtri(1.0 - self.param))
        return float(self.param) if self.kind == "cantelli" else 0.0

    def size(self, sum_mu: float, sum_var: float, sum_perc: float, count: float) -> float:
        """The estimated size of a machine from its items' sums."""
        if self.kind in ("gpa", "cantelli"):
            return sum_mu + self.z * math.sqrt(max(sum_var, 0.0))
        if self.kind == "av":
            return self.param * sum_mu
        if self.kind == "perc":
            return sum_perc
        return count

    def sizer(self) -> Callable[[float, float, float, float], float]:
        """:meth:`size` with the parameter bound: the same arithmetic, without the dispatch
        (the packing loops call it about a million times per G1 instance)."""
        if self.kind in ("gpa", "cantelli"):
            z = self.z
            return lambda m, v, p, n: m + z * math.sqrt(max(v, 0.0))
        if self.kind == "av":
            f = self.param
            return lambda m, v, p, n: f * m
        if self.kind == "perc":
            return lambda m, v, p, n: p
        return lambda m, v, p, n: n

    def item_percentiles(self, samples: np.ndarray) -> np.ndarray:
        """Per-item p-th percentile (numpy's linear interpolation), items x samples."""
        p = self.param if self.kind == "perc" else 100.0
        return np.percentile(samples, p, axis=1)


def pack(
    mu: np.ndarray,
    sigma: np.ndarray,
    estimator: Estimator,
    c: float = 1.0,
    fit: str = "first",
    perc: np.ndarray | None = None,
) -> list[list[int]]:
    """Pack items (in order) into machines of capacity ``c``; lists of item indices."""
    if fit not in ("first", "best"):
        raise ValueError(f"fit must be first or best; got {fit!r}")
    perc = np.zeros(len(mu)) if perc is None else np.asarray(perc)
    bins: list[list[int]] = []
    sums: list[list[float]] = []  # per machine: [sum mu, sum var, sum perc, count]
    size = estimator.sizer()
    for i in range(len(mu)):
        add = a0, a1, a2, a3 = (float(mu[i]), float(sigma[i]) ** 2, float(perc[i]), 1.0)
        best, best_res = -1, math.inf
        for b, s in enumerate(sums):
            new = size(s[0] + a0, s[1] + a1, s[2] + a2, s[3] + a3)
            if new <= c + TOL:
                if fit == "first":
                    best = b
                    break
                if c - new < best_res:
                    best, best_res = b, c - new
        if best < 0:
            bins.append([])
            sums.append([0.0, 0.0, 0.0, 0.0])
            best = len(bins) - 1
        bins[best].append(i)
        sums[best] = [a + d for a, d in zip(sums[best], add, strict=True)]
    return bins


def rebalance(
    bins: list[list[int]],
    mu: np.ndarray,
    sigma: np.ndarray,
    estimator: Estimator,
    c: float = 1.0,
    perc: np.ndarray | None = None,
    max_moves: int | None = None,
) -> list[list[int]]:
    """Fill the last-opened machine L with items moved from the others (ours, spec §2.2).

    Other machines in decreasing estimated size, their items in decreasing mu; move the
    first item that fits into L; start again; stop after a scan with no move or
    ``max_moves`` (default: the number of items) moves.
    """
    bins = [list(b) for b in bins]
    if len(bins) < 2:
        return bins
    perc = np.zeros(len(mu)) if perc is None else np.asarray(perc)
    item = [
        (float(m), float(s) ** 2, float(p), 1.0) for m, s, p in zip(mu, sigma, perc, strict=True)
    ]
    sums = [[sum(item[i][k] for i in b) for k in range(4)] for b in bins]
    size = estimator.sizer()
    order = [sorted(b, key=lambda i: (-item[i][0], i)) for b in bins]
    last = len(bins) - 1
    limit = len(mu) if max_moves is None else max_moves
    for _ in range(limit):
        others = sorted(range(last), key=lambda b: (-size(*sums[b]), b))
        moved = False
        for b in others:
            for i in order[b]:
                new = [a + d for a, d in zip(sums[last], item[i], strict=True)]
                if size(*new) <= c + TOL:
                    order[b].remove(i)
                    bins[b].remove(i)
                    sums[b] = [a - d for a, d in zip(sums[b], item[i], strict=True)]
                    bins[last].append(i)
                    sums[last] = new
                    moved = True
                    break
            if moved:
                break
        if not moved:
            break
    return [b for b in bins if b]


def m_q(
    x: np.ndarray,
    bins: list[list[int]],
    c: float = 1.0,
    rows: np.ndarray | None = None,
    item_means: np.ndarray | None = None,
) -> tuple[int, float, float]:
    """``(m_abs, m, q)`` of a packing evaluated on realisations ``x`` (items x |E|).

    ``rows``: item i is row ``rows[i]`` of ``x`` (default: row i), so an instance drawn from
    a pool is evaluated without copying it; ``item_means``: the items' means over the
    columns of ``x`` (default: computed). A machine's use at t sums its items in the
    bin's order, the same numbers either way.
    """
    x = np.asarray(x, dtype=np.float64)
    idx = np.arange(len(x)) if rows is None else np.asarray(rows)
    if item_means is None:
        item_means = x.mean(axis=1) if rows is None else x[idx].mean(axis=1)
    m_abs = len(bins)
    m_norm = max(1, math.ceil(float(item_means.sum()) / c - TOL))
    over = sum(int((x[idx[b]].sum(axis=0) > c).sum()) for b in bins)
    q = over / (m_abs * x.shape[1]) if m_abs else 0.0
    return m_abs, m_abs / m_norm, q
