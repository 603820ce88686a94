"""``manage.py import_sacct FILE --site NAME``: Slurm accounting into a site's history.

FILE is the output of ``sacct --parsable2 --allusers -X --format JobID,User,Group,Partition,
Submit,Start,End,State,AllocCPUS,Timelimit`` (columns: ``holdqueue/core/sacct.py``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.core.management.base import BaseCommand, CommandError, CommandParser

from holdqueue.services.imports import import_sacct, site_named
from queuecast.errors import QueuecastError


class Command(BaseCommand):
    help = "Import `sacct --parsable2 --allusers` output into a site's job history."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--site", required=True, help="the site's name")
        parser.add_argument("--lenient", action="store_true", help="skip bad rows, report them")
        parser.add_argument("--timezone", default="UTC", help="zone of sacct's times (IANA name)")

    def handle(self, *args: Any, **opts: Any) -> None:
        path: Path = opts["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            tz: dt.tzinfo = ZoneInfo(opts["timezone"])
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise CommandError(f"--timezone {opts['timezone']}: unknown zone") from exc
        try:
            added, report = import_sacct(
                path, site_named(opts["site"]), lenient=opts["lenient"], tz=tz
            )
        except QueuecastError as exc:
            raise CommandError(exc.detail) from exc
        self.stdout.write(
            f"{opts['site']}: {added} jobs added ({report.jobs} finished jobs read, "
            f"{report.never_ran} never ran, {report.steps_skipped} job steps skipped, "
            f"{len(report.skipped)} bad rows skipped)"
        )
        for problem in report.skipped[:20]:
            self.stdout.write(f"  skipped {problem}")
