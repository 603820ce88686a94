"""``manage.py run_task <task> <id>``: one long run, in this process (embedded mode's
background process, started behind a run slot by ``queuecast/background.py``; also handy to
run a pending row by hand)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from queuecast.longrun import task_named

ALLOWED_PREFIXES = ("traces.", "predictor.", "pyss_adapter.", "jobmolding.", "holdqueue.")


class Command(BaseCommand):
    help = "Run one long-run task (by its Celery name) for one row id, in this process."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", help="the task's name, e.g. jobmolding.tasks.run_molding")
        parser.add_argument("run_id", type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["task"]
        if not name.startswith(ALLOWED_PREFIXES):
            raise CommandError(f"{name!r} is not a Queuecast task")
        try:
            task = task_named(name)
        except KeyError:
            raise CommandError(f"no task called {name!r}") from None
        final = task(options["run_id"])
        self.stdout.write(f"{name} #{options['run_id']}: {final}")
