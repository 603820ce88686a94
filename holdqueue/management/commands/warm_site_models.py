"""Fit every site's bundle that is not stored yet, for every process.

A request never fits (``predictor.services.background_fit``): until a site's bundle is stored
its predictions answer 503 "being fitted". ``scripts/serve`` runs this beside gunicorn at
start-up. A site with too little history is reported and skipped.

    python manage.py warm_site_models
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand

from holdqueue.models import Site
from holdqueue.services.predict import warm_site
from queuecast.errors import QueuecastError


class Command(BaseCommand):
    help = "Fit and store every site's bundle that is not stored yet."

    def handle(self, *args: Any, **opts: Any) -> None:
        for site in Site.objects.order_by("pk"):
            started = time.perf_counter()
            try:
                fitted = warm_site(site)
            except QueuecastError as exc:
                self.stdout.write(f"{site.name}: not fitted ({exc.detail})")
                continue
            took = f"fitted in {time.perf_counter() - started:.1f} s" if fitted else "stored"
            self.stdout.write(f"{site.name}: {took}")
