"""``manage.py reap_runs``: fail running rows whose worker is gone (see docs/operations.md)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from queuecast.reaper import reap


class Command(BaseCommand):
    help = "Mark running ingests, evaluations and replays whose worker died as failed."

    def handle(self, *args, **opts) -> None:
        reaped = reap()
        for line in reaped:
            self.stdout.write(line)
        self.stdout.write(f"{len(reaped)} run(s) reaped")
