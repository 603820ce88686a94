"""Fit stored traces' bundles and predict their rows once, keeping both for every process.

A request never fits (``predictor.services.background_fit``): until a trace's bundle is stored
it answers 503 "being fitted". ``scripts/serve`` runs ``warm_predictions --all`` beside
gunicorn at start-up, so the bundles are fitted before (or while) the first users ask.

The recent-error pool of an API answer at a past instant re-scores the ~300 jobs that most
recently started then (``predictor.services.predict.trust``); each row is predicted once per
process and kept (``RowWaitMemo``). Unless ``--fit-only``, this command also predicts every
row ahead of time and stores them beside the fitted bundle
(``predictor.services.fitted_store``), so any past instant answers warm in every web and
worker process (``predictor.services.warm.warm_rows``). It then scores
every row's runtime answer once for the runtime accuracy an answer shows
(``predictor.core.runtime.row_scores``), stored the same way. One process warms a trace at a
time (``predictor.services.warm.warm_trace``); a trace another process is warming (the
child that fitted it, ``fit_model``) is skipped and said so.

    python manage.py warm_predictions KTH-SP2-1996-2.1-cln
    python manage.py warm_predictions --all [--fit-only]
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from predictor.services.predict import bundle_for
from predictor.services.warm import warm_trace
from queuecast.longrun import Status
from queuecast.progress import progress_bar
from traces.models import Trace


class Command(BaseCommand):
    help = "Fit stored traces' bundles and predict every row once, for every process."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trace_name", nargs="*", help="stored traces (or --all)")
        parser.add_argument("--all", action="store_true", help="every done trace")
        parser.add_argument("--fit-only", action="store_true", help="fit and store bundles only")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["all"] == bool(opts["trace_name"]):
            raise CommandError("give trace names or --all")
        done = Trace.objects.filter(status=Status.DONE).order_by("pk")
        traces = list(done) if opts["all"] else []
        for name in opts["trace_name"]:
            trace = Trace.objects.filter(name=name).first()
            if trace is None:
                raise CommandError(f"no stored trace named {name!r}")
            traces.append(trace)
        for trace in traces:
            started = time.perf_counter()
            if opts["fit_only"]:
                bundle_for(trace, block=True)  # fitted here unless stored (or being fitted)
                took = time.perf_counter() - started
                self.stdout.write(f"{trace.name}: bundle ready in {took:.1f} s")
                continue
            with progress_bar(f"predict the rows of {trace.name}") as bar:
                done = warm_trace(trace, progress=bar)
            took = time.perf_counter() - started
            if done is None:
                self.stdout.write(f"{trace.name}: another process is warming it")
                continue
            self.stdout.write(
                f"{trace.name}: {done[0]} rows predicted and {done[1]} runtimes scored, "
                f"stored in {took:.1f} s"
            )
