"""Run one placement experiment of spec placement.md §3.3 and print its table.

python manage.py placement_experiment {G0,G1,G2,T0,T1,C1,C2} [TRACE...] [--jobs N]
    [--instances N] [--realisations R] [--seed N] [--seeds N] [--k K]... [--b0 zero|full]...
    [--models constant|beta]... [--json out.json] [--markdown out.md] [--plot out.png]

Defaults are the spec's grids and scale. Replays (G2, T1, C1) use EASY, requested
estimates, default mode, the whole log (``--jobs N``: its first N jobs); nodes have the
header's MaxProcs/MaxNodes cores when that is an integer >= 2, else 8 ("virtual").
The markdown table goes into docs/results.md; its title states the scale used. The
experiments themselves are in ``pyss_adapter/placement_experiments/`` (one module per seed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from pyss_adapter.core.placement.verdicts import markdown_table
from pyss_adapter.placement_experiments import EXPERIMENTS, RUNNERS, Inputs
from pyss_adapter.placement_plots import plot_machines_vs_q


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
        parser.add_argument(
            "--sources",
            action="append",
            help="G0/G1 sources (default all): azure, swf-beta, gauss; 'gauss 0.1': one rho",
        )
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
        ctx = Inputs(lambda text: self.stdout.write(text, ending="\r"))
        title, columns, rows = RUNNERS[opts["experiment"]](ctx, opts)
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
