"""Run one placement experiment of spec placement.md §3.3 and print its table.

python manage.py placement_experiment {G0,G1,G2,T0,T1,C1,C2} [TRACE...] [--jobs N]
    [--instances N] [--realisations R] [--seed N] [--seeds N] [--k K]... [--b0 zero|full]...
    [--models constant|beta]... [--json out.json] [--markdown out.md] [--plot out.png]

Defaults are the spec's grids and scale. Replays (G2, T1, C1) use EASY, requested
estimates, default mode, the whole log (``--jobs N``: its first N jobs); nodes have the
header's MaxProcs/MaxNodes cores when that is an integer >= 2, else 8 ("virtual").
The markdown table goes into docs/results.md; its title states the scale used.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from pyss_adapter.core.jobs import sim_jobs
from pyss_adapter.core.placement import make_placement
from pyss_adapter.core.placement.base import resolve_cores_per_node
from pyss_adapter.core.placement.experiments import g0_rows, g1_rows, g1_sources, t0_rows
from pyss_adapter.core.placement.usage import read_azure, usage_for_jobs
from pyss_adapter.core.placement.verdicts import (
    C1_POLICIES,
    C2_SEED,
    CLAIRVOYANCE,
    G1_FITS,
    G1_SWEEP,
    G2_POLICIES,
    T1_POLICIES,
    c1_seed,
    c1_verdicts,
    g0_verdicts,
    g1_pair_verdicts,
    g1_seed,
    g2_cells,
    markdown_table,
    ratio_verdict,
    t1_seed,
)
from pyss_adapter.core.replay import replay_jobs
from pyss_adapter.core.stats import all_jobs_view
from pyss_adapter.placement_plots import plot_machines_vs_q
from traces.services import resolve_trace

DEFAULT_TRACES = ["CTC-SP2-1996-3.1-cln", "SDSC-SP2-1998-4.2-cln", "HPC2N-2002-2.2-cln"]
EXPERIMENTS = ("G0", "G1", "G2", "T0", "T1", "C1", "C2")


class Command(BaseCommand):
    help = "Run a placement experiment (G0, G1, G2, T0, T1, C1, C2) and print its table."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("experiment", choices=EXPERIMENTS)
        parser.add_argument("traces", nargs="*", help="stored traces or SWF paths")
        parser.add_argument("--jobs", type=int, default=0, help="first N jobs (0 = all)")
        parser.add_argument("--instances", type=int, default=50, help="G1 instances")
        parser.add_argument("--realisations", type=int, default=10_000, help="G1/G0 R (swf)")
        parser.add_argument("--sets", type=int, default=100, help="G0 item sets per N")
        parser.add_argument("--sources", action="append", help="G0/G1 sources (default all)")
        parser.add_argument(
            "--grid",
            choices=("base", "full"),
            default="full",
            help="G1: base = Best Fit only; full = {FF, BF} x rebalance",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--seeds", type=int, default=3, help="G2 usage seeds")
        parser.add_argument("--k", type=float, action="append", help="load scales")
        parser.add_argument("--b0", action="append", choices=("zero", "full"), help="C1")
        parser.add_argument("--models", action="append", choices=("constant", "beta"))
        parser.add_argument("--usage-file", help="G1 azure CSV (default: traces dir usage/)")
        parser.add_argument("--json")
        parser.add_argument("--markdown")
        parser.add_argument("--plot", help="G1/G2: machines against violation rate (PNG)")

    def handle(self, *args: Any, **opts: Any) -> None:
        started = time.process_time()
        runner = getattr(self, f"_{opts['experiment'].lower()}")
        title, columns, rows = runner(opts)
        cpu = time.process_time() - started
        text = markdown_table(title, columns, rows) + f"\n\nCPU time: {cpu:.0f} s.\n"
        self.stdout.write(text)
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps({"title": title, "rows": rows}, indent=1))
        if opts["markdown"]:
            Path(opts["markdown"]).write_text(text)
        if opts["plot"] and opts["experiment"] in ("G1", "G2"):
            plot_machines_vs_q(rows, opts["plot"], opts["experiment"])
            self.stdout.write(f"wrote {opts['plot']}")

    # -- inputs ------------------------------------------------------------------------
    _usage: dict[tuple, Any] = {}

    def _load(self, opts: dict[str, Any], name: str, k: float = 1.0):
        path = _swf_path(name)
        swf = resolve_trace(None, path) if path else resolve_trace(name, None)
        frame = swf.jobs.iloc[: opts["jobs"]] if opts["jobs"] else swf.jobs
        procs = int(swf.machine_procs)
        header = swf.header
        self.cores = resolve_cores_per_node(None, header.max_procs, header.max_nodes)
        if k != 1.0:
            c = self.cores[0]
            procs = math.ceil(k * procs / c) * c
        return swf.name, sim_jobs(frame, procs), swf

    def _run(self, jobs, name: str, model: str = "constant", seed: int = 0, **opt: Any):
        corr = opt.pop("corr", "rank")
        key = (id(jobs), model, seed, corr)
        if key not in self._usage:  # one usage per schedule: its draws are drawn once
            self._usage = {key: usage_for_jobs(jobs, model=model, seed=seed, corr=corr)}
            self._usage[key].memo = {}
        usage = self._usage[key]
        p = make_placement(name, **opt)
        self.stdout.write(f"  {name} {opt or ''}", ending="\r")
        result = replay_jobs(jobs, placement=p, usage=usage, cores_per_node=self.cores)
        return result, result.placement["metrics"]

    def _scale(self, opts: dict[str, Any]) -> str:
        return f"first {opts['jobs']} jobs" if opts["jobs"] else "whole logs"

    # -- experiments -------------------------------------------------------------------
    def _g0(self, opts):
        rows = []
        for src, (x, _c) in self._g1_sources(opts, rhos=(0.1,), R=None):
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

    def _g1_sources(self, opts: dict[str, Any], rhos=(0.02, 0.1, 0.3), R: int | None = None):
        path = opts["usage_file"] or _usage_path()
        azure = read_azure(path) if path else None
        _, jobs, _ = self._load(opts, (opts["traces"] or DEFAULT_TRACES)[1])
        long_ = (jobs.runtime_s >= 7200) & ~np.isnan(jobs.cpu_frac)
        u = np.clip(jobs.cpu_frac[long_], 0, 1)
        kinds = tuple(opts["sources"] or ("azure", "swf-beta", "gauss"))
        yield from g1_sources(azure, u, rhos, R or opts["realisations"], opts["seed"], kinds)

    def _g1(self, opts):
        rows: list[dict[str, Any]] = []
        cases = [("best", False)] if opts["grid"] == "base" else G1_FITS
        for src, (x, c) in self._g1_sources(opts):
            run = dict(instances=opts["instances"], items=1000, seed=opts["seed"])
            for fit, rebal in cases:
                for row in g1_rows(x, c, fit=fit, rebal=rebal, **run):
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
                rows += self._g1_sweeps(x, c, run)
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
        R = opts["realisations"]
        title = (
            f"G1: GPA offline ({opts['instances']} instances x 1000 items; R = {R} for "
            "the SWF sources, R = T = 8004 for azure; BF unless the fit column says so)"
        )
        return title, cols, rows

    def _g1_sweeps(self, x, c, run) -> list[dict[str, Any]]:
        """Capacity sweep (c x {0.5, 2}) and clairvoyance sweep on the azure items."""
        rows = []
        for scale in (0.5, 2.0):
            for row in g1_rows(x, c * scale, estimators=G1_SWEEP, **run):
                rows.append(
                    {
                        "source": "azure",
                        "c": c * scale,
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

    def _t0(self, opts):
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

    def _t1(self, opts):
        rows = []
        for trace in opts["traces"] or DEFAULT_TRACES:
            for k in opts["k"] or (1.0, 2.0):
                name, jobs, _ = self._load(opts, trace, k)
                for model in opts["models"] or ("constant", "beta"):
                    base = None
                    for pol, opt in T1_POLICIES:
                        _, m = self._run(jobs, pol, model=model, seed=opts["seed"], **opt)
                        row = {
                            "trace": name,
                            "k": k,
                            "usage": model,
                            "policy": _label(pol, opt),
                            **{c: m[c] for c in T1_METRICS},
                        }
                        base = base or row
                        row.update(t1_seed(pol, row, base))
                        rows.append(row)
        cols = ["trace", "k", "usage", "policy", *T1_METRICS, "seed", "verdict"]
        c = self.cores
        return f"T1: Trimaran in replays (C = {c[0]}, {c[1]}; {self._scale(opts)})", cols, rows

    def _c1(self, opts):
        rows = []
        for trace in opts["traces"] or DEFAULT_TRACES:
            for k in opts["k"] or (1.0, 1.5, 2.0, 3.0):
                name, jobs, _ = self._load(opts, trace, k)
                for b0 in opts["b0"] or ("zero", "full"):
                    ref = ref_cost = None
                    for label, pol, opt in C1_POLICIES:
                        result, m = self._run(jobs, pol, **opt, t3_initial=b0)
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
                                "makespan_d": _makespan_d(result),
                                "overloaded": "yes" if _overloaded(result) else "no",
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
        return f"C1: CASH on T3 nodes (t3.2xlarge, constant usage; {self._scale(opts)})", cols, rows

    def _c2(self, opts):
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

    def _g2(self, opts):
        rows = []
        seeds = range(opts["seed"], opts["seed"] + opts["seeds"])
        for trace in opts["traces"] or DEFAULT_TRACES:
            name, jobs, _ = self._load(opts, trace)
            for corr in ("rank", "job"):
                ms: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(G2_POLICIES))}
                for s in seeds:  # policies inside: one usage (and its draws) per seed
                    for i, (pol, opt) in enumerate(G2_POLICIES):
                        ms[i].append(
                            self._run(jobs, pol, model="beta", seed=s, corr=corr, **opt)[1]
                        )
                for i, (pol, opt) in enumerate(G2_POLICIES):
                    row = {"trace": name, "corr": corr, "policy": _label(pol, opt)}
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
            f"{opts['seeds']} seeds; {self._scale(opts)})"
        )
        return title, cols, rows


def _fit(fit: str, rebal: bool) -> str:
    return ("FF" if fit == "first" else "BF") + (" + rebalance" if rebal else "")


def _makespan_d(result: Any) -> float:
    return float(result.end_s.max() - result.submit_s.min()) / 86400 if len(result.end_s) else 0.0


def _overloaded(result: Any) -> bool:
    """Spec §3.3: the wait of the last 10% of jobs (by submission) > 10 x the first 10%'s."""
    wait = np.asarray(result.start_s - result.submit_s, dtype=np.float64)
    tenth = max(1, len(wait) // 10)
    first, last = wait[:tenth].mean(), wait[-tenth:].mean()
    return bool(last > 10 * max(first, 1.0))


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


def _traces_dir() -> Path | None:
    folder = getattr(settings, "QUEUECAST_TRACES_DIR", None) or os.environ.get(
        "QUEUECAST_TRACES_DIR"
    )
    return Path(folder) if folder else None


def _swf_path(name: str) -> str | None:
    """A file path, or a file of QUEUECAST_TRACES_DIR (``.swf.gz`` optional); else None."""
    if Path(name).is_file():
        return name
    folder = _traces_dir()
    for candidate in (name, f"{name}.swf.gz", f"{name}.swf"):
        if folder and (folder / candidate).is_file():
            return str(folder / candidate)
    return None


def _usage_path() -> str | None:
    folder = _traces_dir()
    path = folder / "usage" / "azure-vm-cpu-100.csv.gz" if folder else None
    return str(path) if path and path.is_file() else None


def _label(pol: str, opt: dict[str, Any]) -> str:
    return pol + "".join(f" {k}={v}" for k, v in opt.items())
