"""Node metrics of a placement, computed after the run from its allocation log
(spec placement.md §2.2-§2.4, §4.6).

Every metric is a mean over the sample grid ``t_k = t0 + k * dt`` (t0 = first
submission, dt = the usage model's block, 300 s by default) up to the last end. A
piece is on its node at ``t_k`` when ``t_on <= t_k < t_off``. ``U_n`` is node n's CPU
use in % of its cores (the usage model's sampled use, §1.5).

cluster: active nodes (#{alloc_n > 0}); utilisation of active nodes; spread (std of U
over nodes); hot share (#{U_n > X} / N); use under the threshold
(sum min(U_n, X) / (N X)); fragmented cores (sum free_n [0 < alloc_n < C_n] / sum C);
spike exposure (share of (node, t_k) with U >= 90); risk balance (std over nodes of
AVG + STD of the last 15 minutes, in fractions).
pool: mean open nodes; M = sum open / sum ceil(sum u / C_pool); q = share of
(open node, t_k) whose sampled use exceeds C_pool.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pyss_adapter.core.placement.usage import beta_quantile, h_array

__all__ = ["cluster_block", "grid", "placement_view", "pool_block"]

SERIES_BIN_S = 1800.0
SERIES_POINTS = 400  # longer runs get wider bins (multiples of 30 min)
HEATMAP_COLUMNS = 200
RISK_WINDOW_S = 900.0
_CHUNK = 2_000_000


def grid(log: dict[str, np.ndarray], usage: Any, n_nodes: int, t0: float, t_end: float):
    """``(alloc, use, nominal)`` matrices (K x n_nodes) on the sample grid."""
    dt = float(usage.sample_s)
    K = max(1, int(math.floor((t_end - t0) / dt)) + 1)
    k_on = np.clip(np.ceil((log["t_on"] - t0) / dt), 0, K).astype(np.int64)
    t_off = np.where(np.isnan(log["t_off"]), t_end + dt, log["t_off"])
    k_off = np.clip(np.ceil((t_off - t0) / dt), 0, K).astype(np.int64)
    node, cores = log["node"], log["cores"].astype(np.float64)
    u = usage.u[log["job"]] if len(log["job"]) else np.zeros(0)
    alloc = _spread(K, n_nodes, k_on, k_off, node, cores)
    nominal = _spread(K, n_nodes, k_on, k_off, node, cores * u)
    if usage.model == "constant":
        return alloc, nominal.copy(), nominal
    return alloc, _sampled(K, n_nodes, log, k_on, k_off, usage), nominal


def _spread(K: int, N: int, k_on, k_off, node, value) -> np.ndarray:
    diff = np.zeros((K + 1, N))
    np.add.at(diff, (k_on, node), value)
    np.add.at(diff, (k_off, node), -value)
    out = np.cumsum(diff[:K], axis=0)
    out[np.abs(out) < 1e-9] = 0.0
    return out


def _sampled(K: int, N: int, log, k_on, k_off, usage) -> np.ndarray:
    """Sum of X_{j,r}(k) over the ranks on each node, per grid point (vectorised in chunks)."""
    if getattr(usage, "memo", None) is not None:
        return _sampled_memo(K, N, log, k_on, k_off, usage)
    out = np.zeros((K, N))
    nk = np.maximum(k_off - k_on, 0)
    ranks = log["cores"] if _per_rank(usage) else np.ones_like(nk)
    weight = np.where(ranks == log["cores"], 1.0, log["cores"].astype(np.float64))
    sizes = nk * ranks
    start = 0
    while start < len(sizes):
        stop, total = start, 0
        while stop < len(sizes) and (total == 0 or total + sizes[stop] <= _CHUNK):
            total += sizes[stop]
            stop += 1
        sl = slice(start, stop)
        p_rep = np.repeat(np.arange(start, stop), sizes[sl])
        if len(p_rep):
            first = np.repeat(np.cumsum(sizes[sl]) - sizes[sl], sizes[sl])
            offset = np.arange(len(p_rep)) - first
            r_loc = offset % ranks[p_rep]
            k = k_on[p_rep] + offset // ranks[p_rep]
            x = _x(usage, log["job"][p_rep], log["rank0"][p_rep] + r_loc, k) * weight[p_rep]
            np.add.at(out, (k, log["node"][p_rep]), x)
        start = stop
    return out


def _sampled_memo(K: int, N: int, log, k_on, k_off, usage) -> np.ndarray:
    """:func:`_sampled` with each job's draws ``X_{j,r}(k)`` (ranks x blocks from its first
    block) kept in ``usage.memo``: the X of a (job, rank, block) does not depend on the
    placement (common random numbers, spec §1.5), so replays of one schedule under several
    placements draw them once. Same sums as :func:`_sampled`, up to float addition order."""
    memo, by_rank = usage.memo, _per_rank(usage)
    jobs = np.unique(log["job"])
    k0 = np.full(len(usage.u), np.iinfo(np.int64).max)
    k1 = np.zeros(len(usage.u), np.int64)
    nr = np.zeros(len(usage.u), np.int64)
    np.minimum.at(k0, log["job"], k_on)
    np.maximum.at(k1, log["job"], k_off)
    np.maximum.at(nr, log["job"], log["rank0"] + log["cores"] if by_rank else 1)
    stale = [j for j in jobs if not _covers(memo.get(j), k0[j], k1[j], nr[j])]
    _draw_into(memo, usage, np.asarray(stale, np.int64), k0, k1, nr)
    out = np.zeros((K, N))
    for j, node, r0, c, a, b in zip(log["job"], log["node"], log["rank0"], log["cores"],
                                    k_on, k_off, strict=True):  # fmt: skip
        if b > a:
            first, x = memo[j]
            rows = x[r0 : r0 + c] if by_rank else x[:1] * c
            out[a:b, node] += rows[:, a - first : b - first].sum(axis=0)
    return out


def _covers(entry: Any, a: int, b: int, ranks: int) -> bool:
    return entry is not None and entry[0] <= a and entry[0] + entry[1].shape[1] >= b and (
        entry[1].shape[0] >= ranks
    )  # fmt: skip


def _draw_into(memo: dict, usage: Any, jobs: np.ndarray, k0, k1, nr) -> None:
    """Draw X for ``jobs`` (all ranks x blocks k0..k1), at most ~_CHUNK values at a time."""
    nk = np.maximum(k1[jobs] - k0[jobs], 0)
    sizes = nk * nr[jobs]
    start = 0
    while start < len(jobs):
        stop = start + max(1, int(np.searchsorted(np.cumsum(sizes[start:]), _CHUNK)))
        js, sz = jobs[start:stop], sizes[start:stop]
        j_rep = np.repeat(js, sz)
        offset = np.arange(len(j_rep)) - np.repeat(np.cumsum(sz) - sz, sz)
        nk_rep = np.repeat(nk[start:stop], sz)
        x = _x(
            usage,
            j_rep,
            offset // np.maximum(nk_rep, 1),
            k0[j_rep] + offset % np.maximum(nk_rep, 1),
        )
        for j, part, n in zip(js, np.split(x, np.cumsum(sz)[:-1]), nk[start:stop], strict=True):
            memo[int(j)] = (int(k0[j]), part.reshape(-1, int(n)) if n else part.reshape(0, 0))
        start = stop


def _per_rank(usage: Any) -> bool:
    """Do the ranks of a job draw apart? Only under ``beta`` with ``corr=rank``; otherwise a
    piece of c cores uses c times its job's X (trace and azure move a job as one)."""
    return usage.model == "beta" and usage.corr == "rank"


def _x(usage: Any, j: np.ndarray, r: np.ndarray, k: np.ndarray) -> np.ndarray:
    if usage.model == "trace":
        return usage.trace_use(j, k)
    u = usage.u[j]
    if usage.model == "beta":
        rr = np.zeros_like(r) if usage.corr == "job" else r
        return beta_quantile(u, usage.rho, h_array(usage.seed, usage.job_id[j], rr, k))
    a = usage.azure
    jid = usage.job_id[j]
    v = (h_array(usage.seed, jid, 0, 0) * a.shape[0]).astype(np.int64)
    o = (h_array(usage.seed, jid, 1, 0) * a.shape[1]).astype(np.int64)
    mean = np.maximum(a.mean(axis=1), 1e-12)
    x = u * a[v, (o + k) % a.shape[1]] / mean[v]
    return np.where((u <= 0) | (u >= 1), u, np.clip(x, 0.0, 1.0))


def _span(p: Any) -> tuple[float, float]:
    jobs = p.engine.jobs
    t0 = float(jobs.submit_s[0]) if len(jobs) else 0.0
    offs = [t for t in p.log.t_off if t == t]
    return t0, max(offs + [t0])


def series_bin_s(n_samples: int, dt: float) -> float:
    """30 min, widened to whole multiples so a series has at most 400 points."""
    span = n_samples * dt
    return SERIES_BIN_S * max(1, math.ceil(span / (SERIES_BIN_S * SERIES_POINTS)))


def _bin_means(values: np.ndarray, dt: float, bin_s: float) -> list[float]:
    per = max(1, int(round(bin_s / dt)))
    n = len(values) // per * per
    head = values[:n].reshape(-1, per).mean(axis=1) if n else np.zeros(0)
    tail = [float(values[n:].mean())] if len(values) > n else []
    return [round(float(v), 4) for v in head] + [round(v, 4) for v in tail]


def _risk_balance(use_frac: np.ndarray, dt: float) -> float:
    w = max(1, int(round(RISK_WINDOW_S / dt)))
    c1 = np.cumsum(np.vstack([np.zeros(use_frac.shape[1]), use_frac]), axis=0)
    c2 = np.cumsum(np.vstack([np.zeros(use_frac.shape[1]), use_frac**2]), axis=0)
    idx = np.arange(1, len(use_frac) + 1)
    lo = np.maximum(idx - w, 0)
    n = (idx - lo)[:, None]
    avg = (c1[idx] - c1[lo]) / n
    std = np.sqrt(np.maximum((c2[idx] - c2[lo]) / n - avg**2, 0.0))
    return float((avg + std).std(axis=1).mean())


def cluster_block(p: Any) -> dict[str, Any]:
    """The ``placement`` block (§4.6) of a cluster-framing placement."""
    t0, t_end = _span(p)
    dt = float(p.usage.sample_s)
    cores = p.cores.astype(np.float64)
    alloc, use, _ = grid(p.log.arrays(), p.usage, len(cores), t0, t_end)
    U = 100.0 * use / cores
    X = float(getattr(p, "target", 40.0))
    active = alloc > 0
    n_active = active.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        util_active = 100.0 * (use * active).sum(1) / (cores * active).sum(1)
    frag = ((cores - alloc) * ((alloc > 0) & (alloc < cores))).sum(1) / cores.sum()
    metrics: dict[str, Any] = {
        "active_nodes_mean": float(n_active.mean()),
        "active_node_share": float(n_active.mean() / len(cores)),
        "util_active_mean": float(np.nanmean(util_active)) if n_active.any() else 0.0,
        "util_spread_mean": float(U.std(axis=1).mean()),
        "hot_threshold_pct": X,
        "hot_node_share": float((U > X).mean()),
        "hot_node_share_40": float((U > 40).mean()),
        "under_threshold_use": float((np.minimum(U, X).sum(1) / (len(cores) * X)).mean()),
        "fragmented_core_share": float(frag.mean()),
        "spike_share_90": float((U >= 90).mean()),
        "risk_balance": _risk_balance(use / cores, dt),
        "open_nodes_mean": None,
        "m_ratio": None,
        "q": None,
        "cost_usd": None,
        "surplus_usd": None,
        "credit_std_mean": None,
        "throttled_share": None,
        "jobs_past_request": None,
    }
    metrics.update(p.extra_metrics())
    bin_s = series_bin_s(len(U), dt)
    series: dict[str, Any] = {
        "bin_s": bin_s,
        "t0_s": t0,
        "active_nodes": _bin_means(n_active.astype(np.float64), dt, bin_s),
        "hot_nodes": _bin_means((U > X).sum(1).astype(np.float64), dt, bin_s),
        "util_spread": _bin_means(U.std(axis=1), dt, bin_s),
    }
    series.update(_heatmap(U, dt))
    if hasattr(p, "credit_series"):
        B, _ = p.credit_series()
        if B.size:
            series["credit_mean"] = _bin_means(B.mean(axis=1), dt, bin_s)
            series["credit_std"] = _bin_means(B.std(axis=1), dt, bin_s)
    return _block(p, metrics, series)


def _heatmap(U: np.ndarray, dt: float) -> dict[str, Any]:
    per = max(1, math.ceil(len(U) / HEATMAP_COLUMNS))
    n = math.ceil(len(U) / per)
    pad = np.full((n * per - len(U), U.shape[1]), np.nan)
    cols = np.nanmean(np.vstack([U, pad]).reshape(n, per, U.shape[1]), axis=1)
    return {"heatmap_bin_s": per * dt, "util_heatmap": np.round(cols.T, 1).tolist()}


def pool_block(p: Any) -> dict[str, Any]:
    """The ``placement`` block of a pool-framing placement (GPA family)."""
    t0, t_end = _span(p)
    C = float(p.pool_cores)
    n_nodes = max(len(p.sums), 1)
    alloc, use, nominal = grid(p.log.arrays(), p.usage, n_nodes, t0, t_end)
    open_ = alloc > 0
    n_open = open_.sum(axis=1)
    need = np.ceil(nominal.sum(axis=1) / C - 1e-9)
    over = (use > C + 1e-9) & open_
    metrics = {
        "open_nodes_mean": float(n_open.mean()),
        "max_open_nodes": int(p.max_open),
        "m_ratio": float(n_open.sum() / need.sum()) if need.sum() else None,
        "q": float(over.sum() / open_.sum()) if open_.any() else 0.0,
        "util_open_mean": float(100.0 * use.sum() / (C * n_open.sum())) if n_open.any() else 0.0,
    }
    if p.estimator.kind == "gpa":
        metrics["q_over_rho"] = metrics["q"] / p.estimator.param
    dt = float(p.usage.sample_s)
    bin_s = series_bin_s(len(n_open), dt)
    series = {
        "bin_s": bin_s,
        "t0_s": t0,
        "open_nodes": _bin_means(n_open.astype(np.float64), dt, bin_s),
        "over_nodes": _bin_means(over.sum(1).astype(np.float64), dt, bin_s),
    }
    return _block(p, metrics, series)


def _block(p: Any, metrics: dict[str, Any], series: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": p.name,
        "framing": p.framing,
        "options": p.options(),
        "cluster": p.cluster_info(),
        "usage": p.usage.describe(),
        "metrics": metrics,
        "series": series,
    }


def placement_view(result: Any) -> dict[str, Any]:
    """The placement block of a replay result (empty without placement), metrics only."""
    block = getattr(result, "placement", None) or {}
    return {k: v for k, v in block.items() if k != "series"}
