"""GPA's experiments: G0 (are sums Gaussian?), G1 (the seed's offline protocol), G2
(GPA in replays)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from pyss_adapter.core.placement.experiments import g0_rows, g1_grid, g1_rows, g1_sources
from pyss_adapter.core.placement.usage import read_azure
from pyss_adapter.core.placement.verdicts import (
    CLAIRVOYANCE,
    G1_FITS,
    G1_SWEEP,
    G2_POLICIES,
    g0_verdicts,
    g1_pair_verdicts,
    g1_seed,
    g2_cells,
    ratio_verdict,
)
from pyss_adapter.placement_experiments.inputs import (
    DEFAULT_TRACES,
    Inputs,
    label,
    scale,
    usage_path,
)


def g0(ctx: Inputs, opts: dict[str, Any]):
    rows = []
    for src, (x, _c) in _sources(ctx, opts, rhos=(0.1,), R=None):
        for row in g0_rows(x, sets=opts["sets"], seed=opts["seed"]):
            rows.append({"source": src, **row})
    g0_verdicts(rows)
    cols = [
        "source",
        "n_items",
        "rejected",
        "err_p90",
        "err_p99",
        "err_p99.9",
        "seed",
        "verdict",
    ]
    return (
        (
            f"G0: is a sum of N items Gaussian? ({opts['sets']} item sets x 1000 sums per "
            "N; A-D at 5%)"
        ),
        cols,
        rows,
    )


def _sources(
    ctx: Inputs, opts: dict[str, Any], rhos=(0.02, 0.1, 0.3), R: int | None = None
) -> Iterator[tuple[str, Any]]:
    path = opts["usage_file"] or usage_path()
    azure = read_azure(path) if path else None
    _, jobs, _ = ctx.load(opts, (opts["traces"] or DEFAULT_TRACES)[1])
    long_ = (jobs.runtime_s >= 7200) & ~np.isnan(jobs.cpu_frac)
    u = np.clip(jobs.cpu_frac[long_], 0, 1)
    names = [n.split() for n in opts["sources"] or ("azure", "swf-beta", "gauss")]
    kinds = tuple(n[0] for n in names)
    named = sorted({float(n[1]) for n in names if len(n) > 1})  # "swf-beta 0.1": that rho only
    rhos = tuple(named) or rhos
    yield from g1_sources(azure, u, rhos, R or opts["realisations"], opts["seed"], kinds)


def g1(ctx: Inputs, opts: dict[str, Any]):
    rows: list[dict[str, Any]] = []
    cases = [("best", False)] if opts["grid"] == "base" else G1_FITS
    for src, (x, c) in _sources(ctx, opts):
        run = dict(instances=opts["instances"], items=1000, seed=opts["seed"])
        grid = g1_grid(x, c, cases=cases, **run)
        for fit, rebal in cases:
            for row in grid[(fit, rebal)]:
                rows.append(
                    {
                        "source": src,
                        "c": c,
                        "fit": _fit(fit, rebal),
                        **row,
                        **g1_seed(src, row, fit, rebal),
                    }
                )
        if src == "azure":
            rows += _sweeps(x, c, run)
    g1_pair_verdicts(rows)
    cols = [
        "source",
        "c",
        "fit",
        "estimator",
        "m_abs",
        "m",
        "q",
        "q_ci95",
        "q_over_rho",
        "seed",
        "verdict",
    ]
    R, ran = opts["realisations"], {row["source"].split()[0] for row in rows}
    draws = [f"R = {R} for the SWF sources"] if ran - {"azure"} else []
    draws += ["R = T (every sample) for azure"] if "azure" in ran else []
    title = (
        f"G1: GPA offline ({opts['instances']} instances x 1000 items; "
        f"{', '.join(draws)}; BF unless the fit column says so)"
    )
    return title, cols, rows


def _sweeps(x, c, run) -> list[dict[str, Any]]:
    """Capacity sweep (c x {0.5, 2}) and clairvoyance sweep on the azure items."""
    rows = []
    for factor in (0.5, 2.0):
        for row in g1_rows(x, c * factor, estimators=G1_SWEEP, **run):
            rows.append(
                {
                    "source": "azure",
                    "c": c * factor,
                    "fit": "BF",
                    **row,
                    **g1_seed("azure", row, "best", False),
                }
            )
    for level in CLAIRVOYANCE:
        for row in g1_rows(x, c, observe=level, estimators=[("gpa", 0.01)], **run):
            seed = "O = 100 samples ~ full clairvoyance"
            rows.append(
                {
                    "source": "azure",
                    "c": c,
                    "fit": f"BF, O = {level:g} R",
                    **row,
                    "seed": seed,
                    "verdict": ratio_verdict(row["q_over_rho"]),
                }
            )
    return rows


def g2(ctx: Inputs, opts: dict[str, Any]):
    rows = []
    seeds = range(opts["seed"], opts["seed"] + opts["seeds"])
    for trace in opts["traces"] or DEFAULT_TRACES:
        name, jobs, _ = ctx.load(opts, trace)
        for corr in ("rank", "job"):
            ms: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(G2_POLICIES))}
            for s in seeds:  # policies inside: one usage (and its draws) per seed
                for i, (pol, opt) in enumerate(G2_POLICIES):
                    ms[i].append(ctx.run(jobs, pol, model="beta", seed=s, corr=corr, **opt)[1])
            for i, (pol, opt) in enumerate(G2_POLICIES):
                row = {"trace": name, "corr": corr, "policy": label(pol, opt)}
                rows.append({**row, **g2_cells(ms[i], opt.get("rho"))})
    cols = [
        "trace",
        "corr",
        "policy",
        "open_nodes",
        "M",
        "q",
        "q_min",
        "q_max",
        "q_over_rho",
        "seed",
        "verdict",
    ]
    title = (
        f"G2: GPA in replays (pool nodes of 32 cores, beta rho = 0.1, "
        f"{opts['seeds']} seeds; {scale(opts)})"
    )
    return title, cols, rows


def _fit(fit: str, rebal: bool) -> str:
    return ("FF" if fit == "first" else "BF") + (" + rebalance" if rebal else "")
