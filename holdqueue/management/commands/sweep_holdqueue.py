"""``manage.py sweep_holdqueue [--loop --every S]``: release overdue held jobs, reconcile,
sync sites. ``scripts/serve`` runs it with ``--loop`` in the embedded mode (no broker)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from holdqueue.services.sweep import sweep
from holdqueue.services.sweeper import sweep_forever
from queuecast.heartbeat import pid_exists


class Command(BaseCommand):
    help = "Release held jobs that are due; with --loop, keep doing it every --every seconds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--loop", action="store_true", help="run until interrupted")
        parser.add_argument("--every", type=float, default=5.0, help="seconds between passes")
        parser.add_argument(
            "--parent-pid", type=int, help="stop when this process ends (scripts/serve: itself)"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["every"] <= 0:
            self.stderr.write("--every must be > 0")
            raise SystemExit(2)
        if opts["loop"]:
            self.stdout.write(f"hold-queue sweep every {opts['every']:g} s (Ctrl-C stops)")
            parent = opts["parent_pid"]
            try:
                sweep_forever(
                    opts["every"], stop=None if parent is None else lambda: not pid_exists(parent)
                )
            except KeyboardInterrupt:
                return
        else:
            self.stdout.write(str(sweep()))
