"""Fit one trace's bundle and store it for every process: the child process a web worker
starts instead of fitting in its own thread (``predictor.services.background_fit``).

    python manage.py fit_model <trace id> [--wait METHOD] [--runtime METHOD]

Single flight: the fit takes the store's lock without waiting; when another process holds it
(it is fitting), this ends at once and fits nothing. The status file says ``fitting`` (with
this process's id) while it runs and ``failed`` with the error if it raises (exit code 1).
A site's model: ``fit_site_model``.

Once the service's own bundle (no ``--wait`` / ``--runtime``) is stored, the child goes on to
predict every row once and score every runtime (``warm_predictions``' work,
``predictor.services.warm.warm_trace``) unless ``QUEUECAST_WARM_AFTER_FIT=0``: a trace
uploaded while the server runs then answers any past instant warm, as the traces warmed at
start-up do. Requests are answered from the stored bundle meanwhile.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from predictor.services.predict import cache_for
from predictor.services.warm import warm_trace
from queuecast.limits import memory_ceiling
from traces.models import Trace


class Command(BaseCommand):
    help = "Fit one trace's bundle and store it (single flight across processes)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trace_id", type=int)
        parser.add_argument("--wait", help="the wait method (a `method` override)")
        parser.add_argument("--runtime", help="the runtime method (an override)")

    def handle(self, *args: Any, **opts: Any) -> None:
        trace = Trace.objects.filter(pk=opts["trace_id"]).first()
        if trace is None:
            raise CommandError(f"no trace {opts['trace_id']}")
        model = cache_for(opts["wait"], opts["runtime"]).fit_and_store(trace)
        self.stdout.write("stored" if model is not None else "another process is fitting it")
        if (
            model is None
            or opts["wait"]
            or opts["runtime"]
            or not settings.QUEUECAST_WARM_AFTER_FIT
        ):
            return
        with memory_ceiling(settings.QUEUECAST_RUN_MEMORY_MB):
            done = warm_trace(trace)  # every instant warm, as warm_predictions makes it
        self.stdout.write("warmed" if done is not None else "another process is warming it")
