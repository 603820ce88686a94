"""Runners of the placement experiments that need no engine: G0 (the Gaussian
approximation of sums), G1 (GPA's offline protocol, seed 000 §5) and T0 (Trimaran's
synthetic run); they return table rows
(spec placement.md §3.3). Replays (G2, T1, C1) are driven by the command.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from scipy.special import ndtri
from scipy.stats import anderson

from pyss_adapter.core.placement.baselines import least_allocated_score
from pyss_adapter.core.placement.gpa import Estimator, m_q, pack, rebalance
from pyss_adapter.core.placement.trimaran import lvrb_node_score, tlp_score
from pyss_adapter.core.placement.usage import beta_quantile, h_array

__all__ = [
    "G0_SIZES", "G1_ESTIMATORS", "g0_rows", "g1_grid", "g1_rows", "g1_sources", "t0_rows",
]  # fmt: skip

G1_ESTIMATORS = [
    ("gpa", 0.1), ("gpa", 0.05), ("gpa", 0.01), ("gpa", 0.001),
    ("cantelli", 1.0), ("cantelli", 1.7), ("cantelli", 4.4),
    ("av", 1.0), ("av", 1.25), ("av", 2.0),
    ("perc", 50), ("perc", 70), ("perc", 90), ("perc", 95), ("perc", 99), ("perc", 100),
]  # fmt: skip


def g1_sources(
    azure: np.ndarray | None,
    u_long: np.ndarray,
    rhos: tuple[float, ...],
    R: int,
    seed: int,
    kinds: tuple[str, ...] = ("azure", "swf-beta", "gauss"),
) -> Iterator[tuple[str, tuple[np.ndarray, float]]]:
    """Item pools (items x realisations) and their capacity c, one data source at a time
    (each pool is dropped before the next is built: R = 10,000 draws of thousands of jobs).

    azure: each VM series with a random circular offset, scaled so the mean item is
    0.027 c (c = 1). swf-beta rho: one rank per long job, Beta(u, rho) draws, c = 32.
    gauss rho: N(u, rho u (1 - u)) draws for the same u, c = 32 (the Gaussian control).
    The uniforms h(seed, item, 0, r) are the same for every rho and both kinds. (The
    swf-beta pools are C-ordered and the gauss pools F-ordered, as they always were: a
    row mean's last bit depends on the layout, and G0 reads the pools' row means.)
    """
    rng = np.random.default_rng(seed)
    if azure is not None and "azure" in kinds:
        frac = azure / 100.0
        shifted = np.stack([np.roll(row, int(rng.integers(frac.shape[1]))) for row in frac])
        yield "azure", (shifted * (0.027 / shifted.mean()), 1.0)
    if not ("swf-beta" in kinds or "gauss" in kinds):
        return
    q = h_array(seed, np.arange(len(u_long))[:, None], 0, np.arange(R)[None, :])
    z = ndtri(q) if "gauss" in kinds else None
    u = np.asarray(u_long, dtype=np.float64)[:, None]  # broadcast over the R draws
    for rho in rhos:
        if "swf-beta" in kinds:
            yield f"swf-beta {rho:g}", (np.ascontiguousarray(beta_quantile(u, rho, q)), 32.0)
        if z is not None:
            sigma = np.sqrt(rho * u_long * (1 - u_long))[:, None]
            yield f"gauss {rho:g}", (u + sigma * z, 32.0)


def g1_rows(
    x_all: np.ndarray,
    c: float,
    *,
    instances: int,
    items: int,
    seed: int,
    fit: str = "best",
    rebal: bool = False,
    observe: float = 1.0,
    estimators: list[tuple[str, float]] | None = None,
) -> list[dict[str, Any]]:
    """Mean (m_abs, m, q) over instances of ``items`` drawn from ``x_all`` per estimator.

    ``observe`` < 1 is the clairvoyance level: mu and sigma come from the first
    ceil(observe R) samples and q is measured on the rest (O = E = all at 1).
    """
    case = (fit, rebal)
    grid = g1_grid(
        x_all, c, instances=instances, items=items, seed=seed, cases=[case],
        observe=observe, estimators=estimators,
    )  # fmt: skip
    return grid[case]


def g1_grid(
    x_all: np.ndarray,
    c: float,
    *,
    instances: int,
    items: int,
    seed: int,
    cases: list[tuple[str, bool]],
    observe: float = 1.0,
    estimators: list[tuple[str, float]] | None = None,
) -> dict[tuple[str, bool], list[dict[str, Any]]]:
    """:func:`g1_rows` for several (fit, rebalance) cases on the same instances.

    The items' mu, sigma and percentiles are computed once over the pool (an item's
    statistics are its own row's); each instance is packed once per fit, rebalanced
    from that packing, and every distinct packing of an instance is evaluated once.
    """
    x_all = np.ascontiguousarray(x_all)  # row statistics as over an instance's own rows
    rng = np.random.default_rng(seed)
    draws = [
        rng.choice(len(x_all), size=items, replace=len(x_all) < items) for _ in range(instances)
    ]
    ests = [(Estimator(k, float(p)), float(p)) for k, p in estimators or G1_ESTIMATORS]
    n_obs = max(1, math.ceil(observe * x_all.shape[1]))
    obs, ev = (x_all, x_all) if observe >= 1 else (x_all[:, :n_obs], x_all[:, n_obs:])
    mu_all, sd_all = obs.mean(axis=1), obs.std(axis=1)
    ev_mean = mu_all if observe >= 1 else ev.mean(axis=1)
    ps = sorted({p for e, p in ests if e.kind == "perc"})
    perc_all = dict(zip(ps, np.percentile(obs, ps, axis=1), strict=True)) if ps else {}
    fits = list(dict.fromkeys(f for f, _ in cases))
    res: dict[tuple, list] = {(case, i): [] for case in cases for i in range(len(ests))}
    for pick in draws:
        mu, sigma, means = mu_all[pick], sd_all[pick], ev_mean[pick]
        seen: dict[tuple, tuple[int, float, float]] = {}
        for i, (est, p) in enumerate(ests):
            perc = perc_all[p][pick] if est.kind == "perc" else None
            for fit in fits:
                packed = pack(mu, sigma, est, c, fit, perc)
                for case in (case for case in cases if case[0] == fit):
                    bins = rebalance(packed, mu, sigma, est, c, perc) if case[1] else packed
                    key = tuple(map(tuple, bins))
                    if key not in seen:
                        seen[key] = m_q(ev, bins, c, rows=pick, item_means=means)
                    res[(case, i)].append(seen[key])
    return {
        case: [_g1_row(est, res[(case, i)]) for i, (est, _) in enumerate(ests)] for case in cases
    }


def _g1_row(est: Estimator, res: list[tuple[int, float, float]]) -> dict[str, Any]:
    """Means over the instances, and the 95% half-width of q's mean."""
    arr = np.asarray(res, dtype=np.float64)
    q = arr[:, 2]
    half = 1.96 * q.std(ddof=1) / math.sqrt(len(q)) if len(q) > 1 else 0.0
    return {
        "estimator": est.label,
        "m_abs": float(arr[:, 0].mean()),
        "m": float(arr[:, 1].mean()),
        "q": float(q.mean()),
        "q_ci95": float(half),
        "q_over_rho": float(q.mean() / est.param) if est.kind == "gpa" else None,
    }


G0_SIZES = (10, 20, 50, 100, 200, 500)
G0_LEVELS = (90.0, 99.0, 99.9)


def g0_rows(
    x_all: np.ndarray,
    *,
    sets: int,
    draws: int = 1000,
    seed: int = 0,
    sizes: tuple[int, ...] = G0_SIZES,
) -> list[dict[str, Any]]:
    """Is the sum of N items Gaussian? (seed 000 §4.2: Anderson-Darling at 5% rejects 78%
    of 50-task sums and about 9% of 500-task sums.)

    For each N and each of ``sets`` random item sets (drawn from the rows of ``x_all``,
    items x realisations), ``draws`` sums are formed, each item contributing one
    realisation drawn independently (the item's empirical distribution, as the seed
    draws its realisations). The A-D normality test at 5% is applied to those sums;
    the relative error of the Gaussian percentile ``sum mu + Phi^-1(p) sqrt(sum sigma^2)``
    (mu, sigma over all of an item's realisations) against the sums' empirical p-th
    percentile is averaged over the sets.
    """
    rng = np.random.default_rng(seed)
    mu, sd = x_all.mean(axis=1), x_all.std(axis=1)
    rows = []
    for n in sizes:
        rejected, errors = 0, np.zeros(len(G0_LEVELS))
        for _ in range(sets):
            items = rng.choice(len(x_all), size=n, replace=len(x_all) < n)
            cols = rng.integers(x_all.shape[1], size=(draws, n))
            sums = x_all[items[None, :], cols].sum(axis=1)
            test = anderson(sums, "norm", method="interpolate")
            rejected += int(test.pvalue < 0.05)
            gauss = mu[items].sum() + ndtri(np.asarray(G0_LEVELS) / 100) * math.sqrt(
                float((sd[items] ** 2).sum())
            )
            errors += gauss / np.percentile(sums, G0_LEVELS) - 1.0
        rows.append(
            {"n_items": n, "rejected": rejected / sets,
             **{f"err_p{p:g}": float(e / sets) for p, e in zip(G0_LEVELS, errors, strict=True)}}
        )  # fmt: skip
    return rows


def t0_rows(seed: int = 0, nodes: int = 100, pods: int = 400) -> list[dict[str, Any]]:
    """The talk's synthetic run: 100 nodes of 8000 m, 400 Burstable pods (request 500 m,
    no limit: TLP predicts 750 m) every 30 s, never leaving; actual use
    Normal(800, 200) m clipped to [100, 2000], constant (parameters ours)."""
    use = np.clip(800 + 200 * ndtri(h_array(seed, np.arange(pods), 0, 0)), 100, 2000)
    cases = [("least-allocated", None), ("tlp", 50.0), ("tlp", 40.0), ("lvrb", None)]
    return [_t0_case(name, X, use, nodes) for name, X in cases]


def _t0_case(name: str, target: float | None, use: np.ndarray, nodes: int) -> dict[str, Any]:
    cap, req, predicted = 8000.0, 500.0, 750.0
    x_tlp = 40.0 if target is None else target
    requested = np.zeros(nodes)
    actual = np.zeros(nodes)
    bind: list[list[tuple[float, float]]] = [[] for _ in range(nodes)]
    for i, u in enumerate(use):
        t = 30.0 * i
        t_w = 60.0 * math.floor(t / 60.0)
        cands = [n for n in range(nodes) if requested[n] + req <= cap]
        avg, std = _t0_window(bind, t_w)
        scores = []
        for n in cands:
            if name == "least-allocated":
                scores.append(least_allocated_score([int(cap)], [int(requested[n] + req)]))
            elif name == "tlp":
                missing = sum(predicted for tb, _ in bind[n] if tb > t_w - 60.0)
                scores.append(
                    tlp_score(100 * (avg[n] * cap / 100 + predicted + missing) / cap, x_tlp)
                )
            else:
                scores.append(lvrb_node_score((req, cap, avg[n], std[n])))
        best = max(scores)
        n = cands[scores.index(best)]
        requested[n] += req
        actual[n] += u
        bind[n].append((t, u))
    U = 100 * actual / cap
    X = 40.0 if target is None else target
    used = requested > 0
    return {
        "policy": name if target is None else f"{name} X={target:g}",
        "nodes_used": int(used.sum()),
        "hot_nodes": int((U > X).sum()),
        "hot_threshold": X,
        "util_std": float(U.std()),
        "fragmented": float(((cap - requested) * (used & (requested < cap))).sum() / (nodes * cap)),
        "under_x": float(np.minimum(U, X).sum() / (nodes * X)),
    }


def _t0_window(bind: list[list[tuple[float, float]]], t_w: float) -> tuple[np.ndarray, np.ndarray]:
    """AVG and STD (% of 8000 m) of each node's use sampled at t_w - 60 i, i < 15."""
    times = [t_w - 60.0 * i for i in range(15) if t_w - 60.0 * i >= 0]
    samples = np.array([[sum(u for tb, u in b if tb <= ts) for b in bind] for ts in times])
    pct = 100 * samples / 8000.0
    return pct.mean(axis=0), pct.std(axis=0)
