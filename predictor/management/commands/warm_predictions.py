"""Predict every row of a stored trace once and keep the answers for every process.

The recent-error pool of an API answer at a past instant re-scores the ~300 jobs that most
recently started then (``predictor.services.predict.trust``); each row is predicted once per
process and kept (``RowWaitMemo``). This command predicts them all ahead of time and stores
them beside the fitted bundle (``predictor.services.fitted_store``), so any instant answers warm in
every web and worker process.

    python manage.py warm_predictions KTH-SP2-1996-2.1-cln
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from predictor.services.predict import warm_rows
from queuecast.progress import progress_bar
from traces.models import Trace


class Command(BaseCommand):
    help = "Predict every row of a stored trace once and store the answers for every process."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trace_name", help="a stored trace")

    def handle(self, *args: Any, **opts: Any) -> None:
        trace = Trace.objects.filter(name=opts["trace_name"]).first()
        if trace is None:
            raise CommandError(f"no stored trace named {opts['trace_name']!r}")
        started = time.perf_counter()
        with progress_bar(f"predict the rows of {trace.name}") as bar:
            done = warm_rows(trace, progress=bar)
        self.stdout.write(
            f"{done} rows predicted and stored in {time.perf_counter() - started:.1f} s"
        )
