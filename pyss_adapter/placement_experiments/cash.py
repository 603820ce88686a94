"""CASH's experiments: C1 (CPU credits on T3 nodes) and C2 (disk credits: not run)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pyss_adapter.core.placement.verdicts import C1_POLICIES, C2_SEED, c1_seed, c1_verdicts
from pyss_adapter.core.stats import all_jobs_view
from pyss_adapter.placement_experiments.inputs import DEFAULT_TRACES, Inputs, scale


def c1(ctx: Inputs, opts: dict[str, Any]):
    rows = []
    for trace in opts["traces"] or DEFAULT_TRACES:
        for k in opts["k"] or (1.0, 1.5, 2.0, 3.0):
            name, jobs, _ = ctx.load(opts, trace, k)
            for b0 in opts["b0"] or ("zero", "full"):
                ref = ref_cost = None
                for label, pol, opt in C1_POLICIES:
                    result, m = ctx.run(jobs, pol, **opt, t3_initial=b0)
                    elapsed = float((result.end_s - result.start_s).sum())
                    ref = ref or elapsed
                    ref_cost = ref_cost or m["cost_m5_emr_usd"]  # M5 + EMR at full speed
                    view = all_jobs_view(result)
                    rows.append(
                        {
                            "trace": name,
                            "k": k,
                            "b0": b0,
                            "policy": label,
                            "elapsed_h": elapsed / 3600,
                            "degradation": elapsed / ref - 1,
                            "mean_response_h": view["mean_response_s"] / 3600,
                            "makespan_d": makespan_d(result),
                            "overloaded": "yes" if overloaded(result) else "no",
                            "cost_t3_usd": m["cost_usd"],
                            "cost_ratio_vs_m5_emr": m["cost_usd"] / ref_cost,
                            "surplus_usd": m["surplus_usd"],
                            "credit_std": m["credit_std_mean"],
                            "throttled": m["throttled_share"],
                            "past_request": m["jobs_past_request"],
                            **c1_seed(label),
                        }
                    )
    c1_verdicts(rows)
    cols = [
        "trace",
        "k",
        "b0",
        "policy",
        "elapsed_h",
        "degradation",
        "mean_response_h",
        "makespan_d",
        "overloaded",
        "cost_t3_usd",
        "cost_ratio_vs_m5_emr",
        "surplus_usd",
        "credit_std",
        "throttled",
        "past_request",
        "seed",
        "verdict",
    ]
    return f"C1: CASH on T3 nodes (t3.2xlarge, constant usage; {scale(opts)})", cols, rows


def c2(ctx: Inputs, opts: dict[str, Any]):
    rows = [
        {
            "claim": claim,
            "seed": seed,
            "ours": "not run: SWF has no I/O fields",
            "verdict": "untestable",
        }
        for claim, seed in C2_SEED
    ]
    return "C2: CASH disk credits (gp2)", ["claim", "seed", "ours", "verdict"], rows


def makespan_d(result: Any) -> float:
    return float(result.end_s.max() - result.submit_s.min()) / 86400 if len(result.end_s) else 0.0


def overloaded(result: Any) -> bool:
    """Spec §3.3: the wait of the last 10% of jobs (by submission) > 10 x the first 10%'s."""
    wait = np.asarray(result.start_s - result.submit_s, dtype=np.float64)
    tenth = max(1, len(wait) // 10)
    first, last = wait[:tenth].mean(), wait[-tenth:].mean()
    return bool(last > 10 * max(first, 1.0))
