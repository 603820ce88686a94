"""Trimaran's experiments: T0 (the talk's synthetic run) and T1 (Trimaran in replays)."""

from __future__ import annotations

from typing import Any

from pyss_adapter.core.placement.experiments import t0_rows
from pyss_adapter.core.placement.verdicts import T1_POLICIES, t1_seed
from pyss_adapter.placement_experiments.inputs import DEFAULT_TRACES, Inputs, label, scale

T1_METRICS = [
    "active_nodes_mean",
    "util_active_mean",
    "util_spread_mean",
    "hot_node_share_40",
    "hot_node_share",
    "under_threshold_use",
    "fragmented_core_share",
    "spike_share_90",
    "risk_balance",
]


def t0(ctx: Inputs, opts: dict[str, Any]):
    rows = [
        {**r, "seed": "TLP: fewer hot nodes, less spread", "verdict": ""}
        for r in t0_rows(opts["seed"])
    ]
    base = rows[0]
    for r in rows[1:]:
        better = r["hot_nodes"] < base["hot_nodes"] and r["util_std"] < base["util_std"]
        r["verdict"] = "consistent (direction; no seed number)" if better else "not reproduced"
    rows[0]["verdict"] = "baseline"
    cols = [
        "policy",
        "nodes_used",
        "hot_nodes",
        "hot_threshold",
        "util_std",
        "fragmented",
        "under_x",
        "seed",
        "verdict",
    ]
    return "T0: Trimaran's synthetic run (100 nodes x 8000 m, 400 pods)", cols, rows


def t1(ctx: Inputs, opts: dict[str, Any]):
    rows = []
    for trace in opts["traces"] or DEFAULT_TRACES:
        for k in opts["k"] or (1.0, 2.0):
            name, jobs, _ = ctx.load(opts, trace, k)
            for model in opts["models"] or ("constant", "beta"):
                base = None
                for pol, opt in T1_POLICIES:
                    _, m = ctx.run(jobs, pol, model=model, seed=opts["seed"], **opt)
                    row = {
                        "trace": name,
                        "k": k,
                        "usage": model,
                        "policy": label(pol, opt),
                        **{c: m[c] for c in T1_METRICS},
                    }
                    base = base or row
                    row.update(t1_seed(pol, row, base))
                    rows.append(row)
    cols = ["trace", "k", "usage", "policy", *T1_METRICS, "seed", "verdict"]
    c = ctx.cores
    return f"T1: Trimaran in replays (C = {c[0]}, {c[1]}; {scale(opts)})", cols, rows
