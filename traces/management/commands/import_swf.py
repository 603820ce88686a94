"""``manage.py import_swf PATH``: store an SWF log as a trace, with a progress bar."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from queuecast.errors import QueuecastError
from queuecast.progress import progress_bar
from traces import services
from traces.management.commands._summary import summary_lines


def find_owner(username: str | None) -> Any:
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"--owner {username}: no such user (create it with createsuperuser)")
    return user


def import_file(
    command: BaseCommand, path: Path, options: dict[str, Any], source: str = ""
) -> None:
    """Shared by import_swf and fetch_trace: ingest ``path``, print the summary."""
    name = options["name"] or services.default_name(path.name)
    start = time.perf_counter()
    try:
        with progress_bar(f"import {name}", disable=options["verbosity"] == 0) as bar:
            trace = services.ingest_swf(
                path,
                name=name,
                owner=find_owner(options["owner"]),
                lenient=options["lenient"],
                replace=options["replace"],
                description=options["description"],
                progress=bar,
            )
    except QueuecastError as exc:
        raise CommandError(exc.detail) from exc
    if source:
        type(trace).objects.filter(pk=trace.pk).update(source=source[:500])
    for line in summary_lines(trace, time.perf_counter() - start):
        command.stdout.write(line)


def add_import_arguments(parser: CommandParser) -> None:
    parser.add_argument("--name", help="trace name (default: the file name without .swf/.gz)")
    parser.add_argument("--lenient", action="store_true", help="skip malformed lines, report them")
    parser.add_argument("--replace", action="store_true", help="replace a trace of the same name")
    parser.add_argument("--owner", help="username owning the trace (default: none, staff only)")
    parser.add_argument("--description", default="", help="free text shown with the trace")


class Command(BaseCommand):
    help = "Import an SWF log (.swf or .swf.gz) as a trace: one transaction, whole or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the .swf or .swf.gz file")
        add_import_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        import_file(self, path, options)
