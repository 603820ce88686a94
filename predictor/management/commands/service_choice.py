"""Which runtime method a trace's answers would use, and how it does on the test part.

python manage.py service_choice (TRACE_NAME | --swf PATH) [--tune-fraction 0.2] [--sample 2000]

The service fits every trace and site with the runtime method chosen on its tuning part
(``predictor.core.bundle.choose_runtime``: best success at coverage <= 25% on the tuning
part's dev jobs). This prints every candidate's dev scores, the choice, then the chosen
method's success and coverage on up to ``--sample`` evenly spread jobs of the test part (the
jobs after the tuning part, never seen by the choice), beside the requested time's.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandParser

from predictor.core.answer_accuracy import runtime_scores_on_rows
from predictor.core.bundle import choose_runtime
from predictor.core.runtime.history import build_context
from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.registry import make_method
from traces.services import resolve_trace


def test_rows(run_s: np.ndarray, n_tune: int, sample: int) -> np.ndarray:
    """Up to ``sample`` evenly spread rows after the tuning part with a positive runtime."""
    rows = np.flatnonzero(run_s[n_tune:] > 0) + n_tune
    if rows.size > sample:
        rows = rows[np.unique(np.linspace(0, rows.size - 1, sample).round().astype(np.int64))]
    return rows.astype(np.int64)


class Command(BaseCommand):
    help = "The runtime method the service would choose for a trace, and its test-part scores."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trace_name", nargs="?", help="a stored trace's name")
        parser.add_argument("--swf", help="an SWF file instead of a stored trace")
        parser.add_argument("--tune-fraction", type=float, default=0.2)
        parser.add_argument("--sample", type=int, default=2000, help="test jobs scored")

    def handle(self, *args: Any, **opts: Any) -> None:
        swf = resolve_trace(opts["trace_name"], opts["swf"])
        jobs, procs = swf.jobs, int(swf.machine_procs or 1)
        n_tune = int(opts["tune_fraction"] * len(jobs))
        started = time.perf_counter()
        self.stdout.write(f"{swf.name}: {len(jobs):,} jobs, tuning part {n_tune:,}; choosing ...")
        ctx = build_context(jobs, float(procs), RuntimeParams(), n_tune=n_tune)
        choice = choose_runtime(ctx, 0)
        self.stdout.write("| candidate | dev success | dev coverage | dev ECE |\n|---|---|---|---|")
        for name, s in choice.scores.items():
            self.stdout.write(f"| {name} | {s.success:.3f} | {s.coverage:.3f} | {s.ece:.3f} |")
        self.stdout.write(f"chosen: {choice.name} ({choice.reason}; {choice.dev_jobs} dev jobs)")
        rows = test_rows(ctx.run_s, n_tune, opts["sample"])
        self.stdout.write(f"scoring {rows.size:,} test jobs ...")
        method = make_method(choice.name, 0).fit(ctx)
        out = runtime_scores_on_rows(method, ctx, rows)
        self.stdout.write(
            f"| method | test success | test coverage |\n|---|---|---|\n"
            f"| {choice.name} (chosen) | {out['method_success']:.3f} | "
            f"{out['method_coverage']:.3f} |\n"
            f"| requested time | {out['requested_success']:.3f} | "
            f"{out['requested_coverage']:.3f} |"
        )
        self.stdout.write(f"{time.perf_counter() - started:.0f} s")
