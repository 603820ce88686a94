"""``manage.py demo_setup``: a synthetic demo trace, and the demo user only when asked.

Used by ``scripts/serve``. The trace is generated, never shipped (see docs/synthetic.md).
The user ``demo`` / ``demo-password`` has a published password, so it is created only
with ``--with-user`` (scripts/serve passes it when serving on loopback, or when
``QUEUECAST_DEMO_USER=1``); a production set-up never gets it by default.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from pyss_adapter.core.demo import DEMO_TIME_SCALE, demo_trace
from queuecast.progress import progress_bar
from traces.core.swf import write_swf
from traces.models import Trace
from traces.services import ingest_swf

DEMO_TRACE = "demo-lublin"


class Command(BaseCommand):
    help = "Import a synthetic demo trace; --with-user also creates demo / demo-password."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--with-user",
            action="store_true",
            help="create the user demo / demo-password (a published password: not in production)",
        )
        parser.add_argument("--jobs", type=int, default=5000)
        parser.add_argument("--procs", type=int, default=128)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--time-scale",
            type=float,
            default=DEMO_TIME_SCALE,
            help="divide the workload's times by this at generation (the demo site plays it "
            "at speed 1: one clock for its history and the jobs submitted to it)",
        )

    def handle(self, *args, **opts) -> None:
        user = self._demo_user() if opts["with_user"] else None
        if Trace.objects.filter(name=DEMO_TRACE).exists():
            self.stdout.write(f"demo trace {DEMO_TRACE!r} already there")
            return
        if not opts["time_scale"] >= 1.0:
            raise CommandError(f"--time-scale must be >= 1, got {opts['time_scale']}")
        trace = demo_trace(
            opts["jobs"], opts["procs"], seed=opts["seed"], time_scale=opts["time_scale"]
        )
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{DEMO_TRACE}.swf"
            write_swf(trace, path)
            with progress_bar("Importing demo trace", disable=opts["verbosity"] < 1) as bar:
                stored = ingest_swf(
                    path,
                    name=DEMO_TRACE,
                    owner=user,
                    description="Synthetic Lublin-Feitelson workload, waits from an EASY replay",
                    progress=bar,
                )
        # the temporary file is gone: say what the trace is, not where it was written
        type(stored).objects.filter(pk=stored.pk).update(source=f"generated:{DEMO_TRACE}")
        self.stdout.write(
            f"demo trace {stored.name!r}: {stored.job_count} jobs, "
            f"{stored.span_days:.1f} days, {stored.machine_procs} processors"
        )

    def _demo_user(self):
        users = get_user_model()
        user, created = users.objects.get_or_create(username="demo")
        if created:
            user.set_password("demo-password")
            user.save()
            self.stdout.write("created user demo (password demo-password)")
        return user
