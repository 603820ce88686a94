"""Evaluate queue-wait methods on a trace and store the run (spec "Metrics").

python manage.py evaluate_wait (TRACE_NAME | --swf PATH) [--methods apq,qbets,ibl,median,gbm]
    [--tune-fraction 0.2] [--limit N] [--json FILE] [--seed S]
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from predictor.core.wait.metrics import WAIT_CLASS_LABELS
from predictor.core.wait.registry import DEFAULT_METHODS, parse_methods
from predictor.management.split_args import add_split_arguments, check_split_options
from predictor.models import EvaluationRun
from predictor.services import evaluations
from queuecast.errors import QueuecastError
from queuecast.progress import progress_bar
from traces.models import Trace
from traces.services import resolve_trace

H = 3600.0


def _h(value: float | None) -> str:
    return "-" if value is None else f"{value / H:.3f}"


class Command(BaseCommand):
    help = "Evaluate queue-wait methods (APQ and peers) on the same test jobs of a trace."

    def add_arguments(self, parser: CommandParser) -> None:
        add_split_arguments(parser, DEFAULT_METHODS)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--simulate-waits",
            action="store_true",
            help="for logs without waits (e.g. model-generated): take each job's wait from an "
            "EASY replay with requested times (the run says so)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            methods = parse_methods(opts["methods"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        check_split_options(opts)
        swf = resolve_trace(opts["trace_name"], opts["swf"])
        if opts["simulate_waits"]:
            swf = evaluations.with_replayed_waits(swf)
        params = {k: opts[k] for k in ("tune_fraction", "limit", "seed", "simulate_waits", "jobs")}
        trace = (
            Trace.objects.filter(name=opts["trace_name"]).first() if opts["trace_name"] else None
        )
        try:
            run = evaluations.new_run(
                kind=EvaluationRun.Kind.WAIT, trace=trace, swf_path=opts["swf"] or "",
                methods=methods, params=params,
            )  # fmt: skip
        except QueuecastError as exc:
            raise CommandError(exc.detail) from exc
        EvaluationRun.claim(run.pk)
        started = time.perf_counter()
        try:
            with progress_bar(f"evaluate_wait {swf.name or opts['swf']}") as bar:
                evaluation = evaluations.evaluate_swf(swf, methods, params, bar)
        except ValueError as exc:
            EvaluationRun.fail(run.pk, str(exc))
            raise CommandError(str(exc)) from exc
        elapsed = time.perf_counter() - started
        evaluations.store_result(run.pk, evaluation, elapsed)
        self._report(evaluation, elapsed, run.pk)
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps(evaluation.results, indent=2))
            self.stdout.write(f"wrote {opts['json']}")

    def _report(self, evaluation: Any, elapsed: float, run_id: int) -> None:
        sel = evaluation.selection
        excluded = ", ".join(f"{k} {v}" for k, v in sel.excluded.items() if v) or "none"
        self.stdout.write(
            f"jobs {sel.n_jobs}, tuning part {sel.n_tune}, test targets {sel.targets.size} "
            f"of {sel.test_usable} usable (excluded in test part: {excluded})"
        )
        self.stdout.write(f"state sweep {evaluation.state_s:.1f} s, total {elapsed:.1f} s\n")
        self._main_table(evaluation.results)
        self._class_table(evaluation.results)
        self._interval_table(evaluation.results)
        self._extras(evaluation.results)
        self._candidates(evaluation.results)
        self.stdout.write(f"stored as evaluation run {run_id}")

    def _main_table(self, results: dict[str, Any]) -> None:
        head = (
            f"{'method':<8}{'jobs':>8}{'AAE s':>11}{'AAE h':>9}{'scaled':>9}{'AAE/mean':>10}"
            f"{'correct':>9}{'pred/s':>11}  AAE-AAE(apq) h [95% CI]"
        )
        self.stdout.write(head)
        for name, r in results.items():
            ci = r.get("ci_vs_apq")
            ci_text = f"{_h(ci['diff_s'])} [{_h(ci['lo_s'])}, {_h(ci['hi_s'])}]" if ci else "-"
            ratio = "-" if r["aae_over_mean_wait"] is None else f"{r['aae_over_mean_wait']:.3f}"
            self.stdout.write(
                f"{name:<8}{r['jobs']:>8}{r['aae_s']:>11.0f}{r['aae_h']:>9.3f}{r['scaled_aae']:>9.2f}"
                f"{ratio:>10}{r['correct_share']:>9.3f}{r['predictions_per_s']:>11.4g}  {ci_text}"
            )

    def _class_table(self, results: dict[str, Any]) -> None:
        self.stdout.write("\nAAE (h) per actual-wait class, jobs in brackets")
        self.stdout.write(f"{'method':<8}" + "".join(f"{c:>18}" for c in WAIT_CLASS_LABELS))
        for name, r in results.items():
            cells = [
                f"{_h(v['aae_s'])} ({v['jobs']})".rjust(18) for v in r["aae_by_class"].values()
            ]
            self.stdout.write(f"{name:<8}" + "".join(cells))

    def _interval_table(self, results: dict[str, Any]) -> None:
        """Online conformal intervals per method: coverage and mean width (h) at 0.8 / 0.9."""
        self.stdout.write("\nIntervals (online conformal): coverage / mean width h")
        self.stdout.write(f"{'method':<8}{'0.8':>20}{'0.9':>20}")
        for name, r in results.items():
            cells = [
                f"{v['coverage']:.3f} / {_h(v['mean_width_s'])}".rjust(20)
                for v in r.get("interval", {}).values()
            ]
            self.stdout.write(f"{name:<8}" + "".join(cells))
        self._interval_classes(results, "0.9")

    def _interval_classes(self, results: dict[str, Any], level: str) -> None:
        """Coverage at ``level`` per class of the predicted wait (jobs per class)."""
        first = next(iter(results.values()), {}).get("interval", {}).get(level, {})
        labels = list(first.get("by_prediction", {}))
        if not labels:
            return
        self.stdout.write(f"\nCoverage at {level} by the predicted wait")
        self.stdout.write(f"{'method':<8}" + "".join(f"{lab:>18}" for lab in labels))
        for name, r in results.items():
            by = r.get("interval", {}).get(level, {}).get("by_prediction", {})
            cells = [
                ("-" if v["coverage"] is None else f"{v['coverage']:.3f} ({v['jobs']})").rjust(18)
                for v in by.values()
            ]
            self.stdout.write(f"{name:<8}" + "".join(cells))

    def _candidates(self, results: dict[str, Any]) -> None:
        """A weighing method against its own candidates on the same targets (AAE h; ratios
        to the best candidate and to always-zero)."""
        for name, r in results.items():
            inner = r.get("candidates_aae_s")
            if not inner:
                continue
            best = min(inner, key=inner.get)
            cells = ", ".join(f"{k} {_h(v)}" for k, v in inner.items())
            self.stdout.write(f"\n{name} candidates on the same targets (AAE h): {cells}")
            line = f"{name} {_h(r['aae_s'])} h: {r['aae_s'] / inner[best]:.4f} x best ({best})"
            if inner.get("zero"):
                line += f", {r['aae_s'] / inner['zero']:.4f} x zero"
            self.stdout.write(line)
            choice = r.get("rule_choice")
            if choice and choice.get("aae_s"):
                tried = ", ".join(f"{k} {_h(v)}" for k, v in choice["aae_s"].items())
                self.stdout.write(
                    f"{name} weight rule {choice['rule']} (chosen on the tuning part's "
                    f"{choice['validation_jobs']} validation jobs, AAE h: {tried})"
                )

    def _extras(self, results: dict[str, Any]) -> None:
        self.stdout.write("")
        for name, r in results.items():
            if "upper_aae_s" in r:
                self.stdout.write(
                    f"{name} 0.95 bound: AAE {_h(r['upper_aae_s'])} h, "
                    f"coverage {r['upper_coverage']:.3f}"
                )
            if "predictor_mix" in r:
                mix = ", ".join(f"{k} {v:.1%}" for k, v in sorted(r["predictor_mix"].items()))
                self.stdout.write(f"{name} predictors: {mix}")
