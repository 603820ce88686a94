"""``manage.py create_site NAME --backend slurm|simulated ...``: what staff do over the API,
from the command line (``scripts/serve`` creates the demo simulated site with it)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from holdqueue.models import Site
from holdqueue.serializers import SiteCreateSerializer
from holdqueue.services.sites import create_site
from queuecast.errors import QueuecastError
from traces.models import Trace


class Command(BaseCommand):
    help = "Create a site Queuecast fronts (a Slurm cluster or a simulated one)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--backend", choices=["slurm", "simulated"], required=True)
        parser.add_argument("--procs", type=int, help="machine size (default: the trace's)")
        parser.add_argument("--partition", default="")
        parser.add_argument("--trace", help="trace name: replayed (simulated) / warm-up history")
        parser.add_argument("--config", default="{}", help='backend settings, JSON: {"speed": 10}')
        parser.add_argument("--no-warm-up", action="store_true", help="don't copy the trace's jobs")
        parser.add_argument("--if-missing", action="store_true", help="do nothing if it exists")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["if_missing"] and Site.objects.filter(name=opts["name"]).exists():
            self.stdout.write(f"site {opts['name']} exists")
            return
        trace = None
        if opts["trace"]:
            trace = Trace.objects.filter(name=opts["trace"]).first()
            if trace is None:
                raise CommandError(f"--trace {opts['trace']}: no such trace")
        try:
            config = json.loads(opts["config"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--config is not JSON: {exc}") from exc
        data = {
            "name": opts["name"],
            "backend": opts["backend"],
            "partition": opts["partition"],
            "config": config,
            "trace": trace.pk if trace else None,
            "warm_up": not opts["no_warm_up"],
        }
        if opts["procs"]:
            data["machine_procs"] = opts["procs"]
        form = SiteCreateSerializer(data=data)
        if not form.is_valid():
            raise CommandError(json.dumps(form.errors))
        try:
            site = create_site(form.validated_data, None)
        except QueuecastError as exc:
            raise CommandError(exc.detail) from exc
        self.stdout.write(
            f"site {site.name} ({site.backend}, {site.machine_procs} processors, "
            f"{site.history.count()} history jobs)"
        )
