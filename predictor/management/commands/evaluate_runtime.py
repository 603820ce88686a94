"""Evaluate runtime methods on a trace and store the run (spec "Metrics").

python manage.py evaluate_runtime (TRACE_NAME | --swf PATH)
    [--methods rangeset,baseline,smith,li,tsafrir,requested,quantile] [--tune-fraction 0.2]
    [--limit N] [--json FILE] [--set NAME=VALUE ...]
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.registry import METHODS
from predictor.management.split_args import add_split_arguments, check_split_options
from predictor.models import EvaluationRun
from predictor.services import runtime
from queuecast.errors import QueuecastError
from queuecast.progress import progress_bar
from traces.models import Trace
from traces.services import resolve_trace


def parse_setting(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` for a :class:`RuntimeParams` field, VALUE parsed as JSON when it can be."""
    name, sep, raw = text.partition("=")
    defaults = RuntimeParams().as_dict()
    if not sep or name not in defaults:
        raise CommandError(f"--set {text}: expected NAME=VALUE with NAME in {sorted(defaults)}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return name, value


class Command(BaseCommand):
    help = "Evaluate runtime methods (load-function rangeSets and peers) on the same test jobs."

    def add_arguments(self, parser: CommandParser) -> None:
        add_split_arguments(parser, METHODS)
        parser.add_argument(
            "--set", action="append", default=[], metavar="NAME=VALUE",
            help="override a RuntimeParams field, e.g. --set shift=additive",
        )  # fmt: skip

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            methods = runtime.parse_methods(opts["methods"])
        except QueuecastError as exc:
            raise CommandError(exc.detail) from exc
        check_split_options(opts)
        swf = resolve_trace(opts["trace_name"], opts["swf"])
        params = {
            "tune_fraction": opts["tune_fraction"],
            "limit": opts["limit"],
            "jobs": opts["jobs"],
            **dict(parse_setting(s) for s in opts["set"]),
        }
        run = self._new_run(opts, methods, params)
        started = time.perf_counter()
        try:
            with progress_bar(f"evaluate_runtime {swf.name or opts['swf']}") as bar:
                evaluation = runtime.evaluate_swf(swf, methods, params, bar)
        except (ValueError, TypeError) as exc:
            EvaluationRun.fail(run.pk, str(exc))
            raise CommandError(str(exc)) from exc
        runtime.store_result(run.pk, evaluation)
        self._report(evaluation, time.perf_counter() - started, run.pk)
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps(evaluation["methods"], indent=2))
            self.stdout.write(f"wrote {opts['json']}")

    def _new_run(self, opts: dict[str, Any], methods: list[str], params: dict) -> EvaluationRun:
        name = opts["trace_name"]
        trace = Trace.objects.filter(name=name).first() if name else None
        run = EvaluationRun.objects.create(
            kind=EvaluationRun.Kind.RUNTIME, trace=trace, swf_path=opts["swf"] or "",
            methods=methods, params=params,
        )  # fmt: skip
        EvaluationRun.claim(run.pk)
        return run

    def _report(self, evaluation: dict[str, Any], elapsed: float, run_id: int) -> None:
        self.stdout.write(
            f"jobs {evaluation['n_jobs']}, tuning part {evaluation['n_tune']}, "
            f"test targets {evaluation['n_targets']} (run time > 0); machine "
            f"{evaluation['machine_procs']:g} processors; total {elapsed:.1f} s\n"
        )
        self.stdout.write(
            f"{'method':<10}{'jobs':>8}{'success':>9}{'coverage':>10}{'cov med':>9}"
            f"{'AAE s':>10}{'mean %err':>11}{'time s':>9}"
        )
        for name, r in evaluation["methods"].items():
            self.stdout.write(
                f"{name:<10}{r['jobs']:>8}{r['success_rate']:>9.1%}{r['coverage']:>10.1%}"
                f"{r['coverage_median']:>9.1%}{r['aae_s']:>10.0f}{r['mean_pct_error']:>11.1%}"
                f"{r['seconds']:>9.1f}"
            )
        self._reliability(evaluation["methods"])
        rs = evaluation["methods"].get("rangeset")
        if rs:
            levels = ", ".join(f"{k} {v}" for k, v in rs["levels"].items())
            self.stdout.write(
                f"\nrangeset: {rs['load_functions']} load functions, "
                f"{rs['mean_ranges']:.1f} ranges per job, history levels: {levels}"
            )
        smith = evaluation["methods"].get("smith")
        if smith:
            self.stdout.write(
                "smith templates: " + "; ".join("+".join(t) for t in smith["templates"]) or "none"
            )
        self.stdout.write(f"stored as evaluation run {run_id}")

    def _reliability(self, methods: dict[str, Any]) -> None:
        """Per method: ranges binned by stated probability, the mean stated probability and
        how often the actual runtime fell in them (calibrated: the two agree), and the ECE."""
        for name, r in methods.items():
            rows = r.get("reliability")
            if not rows:
                continue
            self.stdout.write(
                f"\n{name}: range probabilities, stated vs observed (ECE {r['ece']:.3f})"
            )
            self.stdout.write(f"{'stated bin':<12}{'ranges':>8}{'stated':>8}{'observed':>10}")
            for row in rows:
                self.stdout.write(
                    f"{row['bin']:<12}{row['ranges']:>8}{row['stated']:>8.3f}{row['observed']:>10.3f}"
                )
