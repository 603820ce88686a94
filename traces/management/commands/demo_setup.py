"""``manage.py demo_setup``: a demo user and a synthetic demo trace (idempotent).

Used by ``scripts/serve``. The trace is generated, never shipped (see docs/synthetic.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from queuecast.progress import progress_bar
from traces.core.demo import demo_trace
from traces.core.swf import write_swf
from traces.models import Trace
from traces.services import ingest_swf

DEMO_TRACE = "demo-lublin"


class Command(BaseCommand):
    help = "Create the demo user (demo / demo-password) and import a synthetic demo trace."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--jobs", type=int, default=5000)
        parser.add_argument("--procs", type=int, default=128)
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args, **opts) -> None:
        user = self._demo_user()
        if Trace.objects.filter(name=DEMO_TRACE).exists():
            self.stdout.write(f"demo trace {DEMO_TRACE!r} already there")
            return
        trace = demo_trace(opts["jobs"], opts["procs"], seed=opts["seed"])
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
