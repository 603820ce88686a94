"""``manage.py generate_trace OUT.swf``: a synthetic Lublin-Feitelson trace (docs/synthetic.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from django.core.management.base import BaseCommand, CommandError

from queuecast.progress import progress_bar
from traces.core.swf import SwfTrace, write_swf
from traces.core.swf_header import parse_header
from traces.core.synthetic import MODELS, generate_lublin, lublin_header


class Command(BaseCommand):
    help = "Generate a synthetic SWF trace (Lublin-Feitelson model); OUT ending in .gz is gzipped."

    def add_arguments(self, parser) -> None:
        parser.add_argument("out", help="output path (.swf or .swf.gz)")
        parser.add_argument("--jobs", type=int, default=10_000, help="number of jobs (10000)")
        parser.add_argument("--procs", type=int, default=128, help="machine processors (128)")
        parser.add_argument("--seed", type=int, default=1, help="random seed (1)")
        parser.add_argument("--users", type=int, default=20, help="number of users (20)")
        parser.add_argument(
            "--model",
            choices=sorted(MODELS),
            default="batch",
            help="parameter set: batch jobs (default) or the all-jobs fit (busier)",
        )

    def handle(self, *args, **opts) -> None:
        if opts["jobs"] < 1 or opts["procs"] < 1 or opts["users"] < 1:
            raise CommandError("--jobs, --procs and --users must be at least 1")
        params = MODELS[opts["model"]]
        with progress_bar("Generating", disable=opts["verbosity"] < 1) as progress:
            jobs = generate_lublin(
                opts["jobs"],
                opts["procs"],
                rng=np.random.default_rng(opts["seed"]),
                n_users=opts["users"],
                params=params,
            )
            progress(0.5)
            lines = lublin_header(opts["jobs"], opts["procs"], seed=opts["seed"], params=params)
            try:
                write_swf(SwfTrace(header=parse_header(lines), jobs=jobs), opts["out"])
            except OSError as exc:
                raise CommandError(f"cannot write {opts['out']}: {exc}") from exc
        self.stdout.write(_summary(jobs, opts["procs"], opts["out"]))


def _summary(jobs: pd.DataFrame, procs: int, out: str) -> str:
    """A two-column table of what was written."""
    sizes = jobs["allocated_procs"].to_numpy()
    span_s = float(jobs["submit_time"].iloc[-1]) or 1.0
    rows = [
        ("file", out),
        ("jobs", f"{len(jobs)}"),
        ("span (days)", f"{span_s / 86400:.1f}"),
        ("serial share", f"{np.mean(sizes == 1):.3f}"),
        ("power-of-two share", f"{np.mean((sizes & (sizes - 1)) == 0):.3f}"),
        ("median runtime (s)", f"{jobs['run_time'].median():.0f}"),
        ("offered load", f"{(jobs['run_time'] * sizes).sum() / (procs * span_s):.2f}"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)
