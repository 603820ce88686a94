"""Fit one site's bundle and store it for every process: the child process a web worker
starts instead of fitting in its own thread (``predictor.services.background_fit``).

    python manage.py fit_site_model <site id>

Single flight: the fit takes the store's site lock without waiting; when another process
holds it (it is fitting), this ends at once and fits nothing.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from holdqueue.models import Site
from holdqueue.services import predict as site_predict
from predictor.services.fitted_store import default_store


class Command(BaseCommand):
    help = "Fit one site's bundle and store it (single flight across processes)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("site_id", type=int)

    def handle(self, *args: Any, **opts: Any) -> None:
        site = Site.objects.filter(pk=opts["site_id"]).first()
        if site is None:
            raise CommandError(f"no site {opts['site_id']}")
        model = site_predict.fit_and_store(site, default_store(), blocking=False)
        self.stdout.write("stored" if model is not None else "another process is fitting it")
