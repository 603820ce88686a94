"""``manage.py fetch_trace NAME``: download a log from the PWA, check it, import it."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from queuecast.progress import progress_bar
from traces.management.commands.import_swf import add_import_arguments, import_file
from traces.services.fetch import FetchError, archive_url, download


class Command(BaseCommand):
    help = (
        "Download a Parallel Workloads Archive log by its file name "
        "(e.g. KTH-SP2-1996-2.1-cln.swf.gz), check its size and sha256 where known, import it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "archive_name", help="file name in the archive, e.g. HPC2N-2002-2.2-cln.swf.gz"
        )
        parser.add_argument(
            "--base-url",
            default=None,
            help="archive root (default: settings.QUEUECAST_PWA_BASE_URL)",
        )
        parser.add_argument("--url", default=None, help="full address, overriding the URL pattern")
        add_import_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        name = Path(options["archive_name"]).name
        base = options["base_url"] or settings.QUEUECAST_PWA_BASE_URL
        quiet = options["verbosity"] == 0
        with tempfile.TemporaryDirectory(prefix="queuecast-fetch-") as tmp:
            try:
                url = options["url"] or archive_url(name, base)
                if not quiet:
                    self.stdout.write(f"downloading {url}")
                with progress_bar(f"download {name}", disable=quiet) as bar:
                    got = download(url, Path(tmp) / name, name=name, progress=bar)
            except FetchError as exc:
                raise CommandError(exc.detail) from exc
            check = "matches the known sha256" if got.verified else "no known checksum"
            self.stdout.write(f"{got.size:,} bytes, sha256 {got.sha256} ({check})")
            import_file(self, got.path, options, source=url)
