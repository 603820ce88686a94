"""Which wait a site should tell, measured on a log: every headline rule and the rule chosen
online, against the actual waits of the log's test part.

python manage.py evaluate_headline (TRACE_NAME | --swf PATH) [--every 1] [--rule-jobs 200]
    [--block 500] [--level 0.9] [--json FILE] [--save FILE.npz | --load FILE.npz]

The log is fitted as the service fits a trace (``service_methods``: ``auto`` waits and the
runtime method chosen on the tuning part, the first 20% of jobs); each scored job is answered
as a live site answers a new request (history estimate and queue-based start at its
arrival, ``jobmolding.core.headline_scores``), from ``2 x rule-jobs`` jobs before the test
part to the end. ``--every k`` answers every k-th of those jobs only (cheaper; the pools are
then made of the answered jobs). Then ``jobmolding.core.headline_eval.evaluate_rules``: the
test part in blocks of ``--block`` jobs, each telling the rule chosen on the last
``--rule-jobs`` jobs finished by its first arrival, with the interval at ``--level`` calibrated
on them, and once more with the interval a site learns as the jobs it told start (the row
"chosen online, interval learnt as told jobs start": every answered job counts as told,
``headline_eval._told_online``). Prints one row per way of telling the wait (docs/sites.md,
"Which start a user is told"; docs/results.md, "Which wait a site tells", "Stop 57").
``--save`` keeps the answered jobs (the answers do not depend on the rule), ``--load`` scores
them again without fitting or answering.
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandParser

from jobmolding.core.headline_eval import evaluate_rules
from jobmolding.core.headline_scores import Answered, answer_rows
from predictor.core.bundle import TUNE_FRACTION, fit_bundle
from predictor.services.predict import service_methods
from queuecast.progress import progress_bar
from traces.services import resolve_trace

FIELDS = ("history_s", "queue_s", "actual_s", "runtime_s", "actual_runtime_s")


def _finite(value: Any) -> Any:
    """Infinity (always zero's interval) as null: JSON has no infinity."""
    return None if isinstance(value, float) and not np.isfinite(value) else value


class Command(BaseCommand):
    help = "Every headline rule and the rule chosen online, on a log's test part."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trace_name", nargs="?", help="a stored trace's name")
        parser.add_argument("--swf", help="an SWF file instead of a stored trace")
        parser.add_argument("--every", type=int, default=1, help="answer every k-th job")
        parser.add_argument("--rule-jobs", type=int, default=200, help="jobs a rule is chosen on")
        parser.add_argument("--block", type=int, default=500, help="test jobs per choice")
        parser.add_argument("--level", type=float, default=0.9, help="the interval's confidence")
        parser.add_argument("--json", help="write the figures to this file")
        parser.add_argument("--save", help="keep the answered jobs in this .npz file")
        parser.add_argument("--load", help="score the answered jobs of a --save file")

    def handle(self, *args: Any, **opts: Any) -> None:
        started = time.process_time()
        if opts["load"]:
            saved = np.load(opts["load"])
            name, n_tune, rows = str(saved["trace"]), int(saved["n_tune"]), saved["rows"]
            answered = Answered(*(saved[f] for f in FIELDS))
            submit = saved["submit"]
        else:
            name, n_tune, rows, answered, submit = self._answer(opts)
        if opts["save"]:
            np.savez(opts["save"], trace=name, n_tune=n_tune, rows=rows, submit=submit,
                     **{f: getattr(answered, f) for f in FIELDS})  # fmt: skip
        end = submit + answered.actual_s + np.maximum(answered.actual_runtime_s, 0.0)
        test = np.flatnonzero(rows >= n_tune)
        table, kept = evaluate_rules(answered, submit, end, test, block=opts["block"],
                                     rule_jobs=opts["rule_jobs"], level=opts["level"])  # fmt: skip
        self._print(table, kept, test.size, opts["level"])
        cpu = time.process_time() - started
        self.stdout.write(f"{cpu:.0f} CPU-s; chosen online: " + ", ".join(
            f"{r} {n / test.size:.0%}" for r, n in kept.most_common()))  # fmt: skip
        if opts["json"]:
            options = {k: opts[k] for k in ("every", "rule_jobs", "block", "level")}
            rules = [{k: _finite(v) for k, v in vars(s).items()} for s in table]
            figures = {"trace": name, "test_jobs": int(test.size), "cpu_s": cpu,
                       "options": options, "rules": rules, "kept": dict(kept)}  # fmt: skip
            with open(opts["json"], "w") as fh:
                json.dump(figures, fh, indent=1)

    def _answer(self, opts: dict[str, Any]) -> tuple[str, int, np.ndarray, Answered, np.ndarray]:
        """Fit the log as the service does and answer its jobs from ``2 x rule-jobs`` before
        the test part on (module docstring)."""
        swf = resolve_trace(opts["trace_name"], opts["swf"])
        jobs, procs = swf.jobs, int(swf.machine_procs or 1)
        n_tune = int(TUNE_FRACTION * len(jobs))
        wait_method, runtime_method = service_methods()
        self.stdout.write(f"{swf.name}: {len(jobs):,} jobs, tuning part {n_tune:,}; fitting "
                          f"{wait_method} / {runtime_method} ...")  # fmt: skip
        bundle = fit_bundle(jobs, procs, wait_method=wait_method, runtime_method=runtime_method)
        first = max(n_tune - 2 * opts["rule_jobs"], 1)
        known = jobs["wait_time"].to_numpy(float) >= 0
        rows = (np.flatnonzero(known[first:]) + first)[:: max(opts["every"], 1)]
        with progress_bar(f"answering {rows.size:,} jobs") as bar:
            answered = answer_rows(bundle, rows, lambda k: bar(k / rows.size))
        return swf.name, n_tune, rows, answered, jobs["submit_time"].to_numpy(float)[rows]

    def _print(self, table: list, kept: Any, n_test: int, level: float) -> None:
        self.stdout.write(
            f"| way of telling the wait ({n_test:,} test jobs) | MAE (s) | mean error (s) | "
            f"under by > half | {level:.0%} interval coverage | median width (s) |\n"
            "|---|---:|---:|---:|---:|---:|"
        )
        for s in table:
            interval = ("- | -" if s.name == "always zero"
                        else f"{s.coverage:.3f} | {s.median_width_s:,.0f}")  # fmt: skip
            self.stdout.write(f"| {s.name} | {s.mae_s:,.0f} | {s.bias_s:+,.0f} | "
                              f"{s.late_share:.3f} | {interval} |")  # fmt: skip
