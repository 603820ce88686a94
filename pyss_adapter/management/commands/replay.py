"""Replay a trace in the simulator and print its statistics (spec ``simulator.md``).

python manage.py replay (TRACE_NAME | --swf PATH) [--scheduler fcfs|easy|conservative]
    [--estimates requested|tsafrir] [--mode default|pyss] [--processors N]
    [--output jobs.csv] [--json stats.json]
    [--placement NAME [--placement-opt KEY=VALUE]... [--cores-per-node C]
     [--usage-model constant|beta|trace|azure] [--usage-file PATH] [--usage-rho R]
     [--usage-corr rank|job]
     [--usage-sample-s S] [--usage-knowledge oracle|history] [--usage-fill F]
     [--seed N] [--placement-log allocations.csv] [--placement-plot PREFIX]]
     (docs/placement.md)
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pyss_adapter.core.estimates import ESTIMATE_NAMES
from pyss_adapter.core.jobs import MODES
from pyss_adapter.core.placement import PLACEMENT_NAMES
from pyss_adapter.core.placement.report import allocation_frame, placement_lines
from pyss_adapter.core.pyss_io import result_frame
from pyss_adapter.core.replay import SCHEDULERS
from pyss_adapter.placement_plots import plot_credits, plot_heatmap
from pyss_adapter.services import ReplaySettings, simulate
from queuecast.errors import QueuecastError
from queuecast.progress import progress_bar
from traces.services import resolve_trace

CSV_COLUMNS = ["job_id", "submit_time", "start_time", "end_time", "processors", "estimate"]


class Command(BaseCommand):
    help = "Replay a trace with FCFS, EASY or conservative backfilling; print the statistics."
    # The system checks import every URL module (and scikit-learn with them): a
    # second of start-up for a command that needs none of it.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trace_name", nargs="?", help="a stored trace")
        parser.add_argument("--swf", help="an SWF file (.swf or .swf.gz) instead")
        parser.add_argument("--scheduler", choices=list(SCHEDULERS), default="easy")
        parser.add_argument("--estimates", choices=list(ESTIMATE_NAMES), default="requested")
        parser.add_argument("--mode", choices=list(MODES), default="default")
        parser.add_argument("--processors", type=int, help="machine size (default: header)")
        parser.add_argument("--output", help="per-job CSV: " + ",".join(CSV_COLUMNS))
        parser.add_argument("--json", help="write the statistics here")
        group = parser.add_argument_group("placement (docs/placement.md)")
        group.add_argument("--placement", choices=list(PLACEMENT_NAMES), default="")
        group.add_argument("--placement-opt", action="append", default=[], metavar="KEY=VALUE")
        group.add_argument("--cores-per-node", type=int)
        group.add_argument(
            "--usage-model", choices=["constant", "beta", "trace", "azure"], default="constant"
        )
        group.add_argument("--usage-file", default="", help="trace: job_id,t_offset_s,cores_used")
        group.add_argument("--usage-rho", type=float, default=0.1)
        group.add_argument("--usage-corr", choices=["rank", "job"], default="rank")
        group.add_argument("--usage-sample-s", type=float, default=300.0)
        group.add_argument("--usage-knowledge", choices=["oracle", "history"], default="oracle")
        group.add_argument("--usage-fill", type=float)
        group.add_argument("--seed", type=int, default=0)
        group.add_argument("--placement-log", help="job_id,node,cores,t_on,t_off per piece")
        group.add_argument(
            "--placement-plot", help="PREFIX: PREFIX-heatmap.png (+ PREFIX-credits.png for T3)"
        )

    def _plots(self, block: dict[str, Any], prefix: str) -> None:
        plot_heatmap(block, f"{prefix}-heatmap.png")
        self.stdout.write(f"wrote {prefix}-heatmap.png")
        if plot_credits(block, f"{prefix}-credits.png"):
            self.stdout.write(f"wrote {prefix}-credits.png")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            settings = ReplaySettings(
                opts["scheduler"],
                opts["estimates"],
                opts["mode"],
                opts["processors"],
                **_placement_settings(opts),
            )
            swf = resolve_trace(opts["trace_name"], opts["swf"])
            started = time.perf_counter()
            with progress_bar(f"replay {swf.name} ({settings.scheduler})") as bar:
                result, summary = simulate(swf, settings, bar)
        except QueuecastError as exc:
            raise CommandError(exc.detail) from exc
        elapsed = time.perf_counter() - started
        self._report(summary, elapsed, len(result.jobs))
        if result.placement:
            for line in placement_lines(result.placement):
                self.stdout.write(line)
        if opts["placement_log"] and result.placement:
            frame = allocation_frame(result)
            frame.to_csv(opts["placement_log"], index=False, float_format="%.10g")
            self.stdout.write(f"wrote {opts['placement_log']} ({len(frame)} pieces)")
        if opts["placement_plot"] and result.placement:
            self._plots(result.placement, opts["placement_plot"])
        if opts["output"]:
            frame = result_frame(result)[CSV_COLUMNS]
            frame.to_csv(opts["output"], index=False, float_format="%.10g")
            self.stdout.write(f"wrote {opts['output']} ({len(frame)} jobs)")
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps(summary, indent=1))
            self.stdout.write(f"wrote {opts['json']}")

    def _report(self, summary: dict[str, Any], elapsed: float, n_jobs: int) -> None:
        run = summary["run"]
        self.stdout.write(
            f"{run['trace']}: {n_jobs} jobs on {run['machine_procs']} processors "
            f"({run['processors_source']}), {run['scheduler']}, estimates {run['estimates']}, "
            f"mode {run['mode']}; simulated in {elapsed:.2f} s ({n_jobs / elapsed:,.0f} jobs/s)"
        )
        notes = {k: v for k, v in run["notes"].items() if v}
        label = (
            "PySS conversions applied" if run["mode"] == "pyss" else "input fixes (default mode)"
        )
        self.stdout.write(f"{label}: {notes or 'none'}")
        a, p = summary["all_jobs"], summary["pyss"]
        self.stdout.write(f"\n{'statistic':<28}{'all jobs':>14}{'pyss view':>14}")
        rows = [
            ("jobs counted", a["n_jobs"], p["n_jobs"], "{:d}"),
            ("mean wait (minutes)", _div(a["mean_wait_s"], 60), p["mean_wait_min"], "{:.2f}"),
            ("mean wait (seconds)", a["mean_wait_s"], _mul(p["mean_wait_min"], 60), "{:.0f}"),
            ("mean response (minutes)", _div(a["mean_response_s"], 60), p["mean_response_min"],
             "{:.2f}"),
            ("mean slowdown", a["mean_slowdown"], p["mean_slowdown"], "{:.2f}"),
            ("mean bounded slowdown (10s)", a["mean_bounded_slowdown"],
             p["mean_bounded_slowdown"], "{:.2f}"),
        ]  # fmt: skip
        for name, left, right, fmt in rows:
            self.stdout.write(f"{name:<28}{_fmt(left, fmt):>14}{_fmt(right, fmt):>14}")
        self.stdout.write(f"{'utilisation':<28}{a['utilisation']:>14.3f}{'-':>14}")


def _placement_settings(opts: dict[str, Any]) -> dict[str, Any]:
    if not opts["placement"]:
        if opts["placement_opt"] or opts["placement_log"] or opts["placement_plot"]:
            raise CommandError(
                "--placement-opt, --placement-log and --placement-plot need --placement NAME"
            )
        return {}
    options = {}
    for item in opts["placement_opt"]:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandError(f"--placement-opt must be KEY=VALUE; got {item!r}")
        options[key.strip()] = value.strip()
    return {
        "placement": opts["placement"],
        "placement_options": options,
        "cores_per_node": opts["cores_per_node"],
        "usage_model": opts["usage_model"],
        "usage_rho": opts["usage_rho"],
        "usage_corr": opts["usage_corr"],
        "usage_sample_s": opts["usage_sample_s"],
        "usage_knowledge": opts["usage_knowledge"],
        "usage_fill": opts["usage_fill"],
        "usage_file": opts["usage_file"],
        "seed": opts["seed"],
    }


def _fmt(value: float | int | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def _div(value: float | None, by: float) -> float | None:
    return None if value is None else value / by


def _mul(value: float | None, by: float) -> float | None:
    return None if value is None else value * by
