"""The periodic sweep: release every held job that is due (a lost ETA task or a restart
loses nothing), reconcile jobs stuck in ``submitting`` from their tags, and keep each
site's history and our jobs' backend states in step with the batch system.

Runs from Celery beat in broker mode and from ``manage.py sweep_holdqueue --loop`` (started
by ``scripts/serve``) in the embedded mode.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import Any

from django.db import transaction

from holdqueue.core.backends.base import BackendUnavailable
from holdqueue.models import Site, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services.history import record_active, record_finished, sync_since
from holdqueue.services.jobs import mark_submitted, release_job, setting

log = logging.getLogger(__name__)


def release_due(limit: int = 500) -> int:
    """Release the held jobs whose time has come, oldest first; returns how many went."""
    due = SiteJob.objects.filter(state=SiteJob.HELD, release_at__lte=bk.now())
    ids = list(due.order_by("release_at", "id").values_list("id", flat=True)[:limit])
    return sum(release_job(pk) is not None for pk in ids)


def reconcile_submitting() -> int:
    """Jobs left in ``submitting`` longer than the lease: find them by tag, else hold again.

    The lease exceeds the backend's command timeout, so a submission still in flight is never
    taken for a lost one.
    """
    lease = dt.timedelta(seconds=setting("QUEUECAST_SUBMIT_LEASE_S", 60))
    stale = SiteJob.objects.filter(state=SiteJob.SUBMITTING, updated_at__lt=bk.now() - lease)
    fixed = 0
    for job in stale.select_related("site", "owner"):
        try:
            found = bk.backend_for(job.site).find(job.tag, job.arrived_at.timestamp() - 60)
        except BackendUnavailable:
            continue
        if found is not None:
            mark_submitted(job, found.backend_id)
        else:
            with transaction.atomic():
                SiteJob.objects.filter(pk=job.pk, state=SiteJob.SUBMITTING).update(
                    state=SiteJob.HELD, release_at=bk.now()
                )
        fixed += 1
    return fixed


def sync_site(site: Site) -> dict[str, Any]:
    """Read the backend's live and finished jobs into our rows and the site's history."""
    backend = bk.backend_for(site)
    until = bk.now()
    active = backend.active()
    finished = backend.finished_since(sync_since(site))
    record_active(site, active)
    added = record_finished(site, finished, until)
    return {"site": site.name, "active": len(active), "history_added": added}


def sync_sites(min_interval_s: float) -> list[dict[str, Any]]:
    """Sync every site last synced more than ``min_interval_s`` ago; a down site is skipped."""
    cutoff = bk.now() - dt.timedelta(seconds=min_interval_s)
    out = []
    for site in Site.objects.all():
        if site.synced_until and site.synced_until > cutoff:
            continue
        try:
            out.append(sync_site(site))
        except (BackendUnavailable, bk.BackendDown) as exc:
            log.warning("sync of site %s skipped: %s", site.name, exc)
    return out


def sweep() -> dict[str, Any]:
    """One pass: releases first (they are time-critical), then reconciliation and sync."""
    released = release_due()
    reconciled = reconcile_submitting()
    synced = sync_sites(setting("QUEUECAST_SITE_SYNC_S", 60))
    return {"released": released, "reconciled": reconciled, "synced": len(synced)}


def sweep_forever(every_s: float, stop: Any = None) -> None:  # pragma: no cover - a loop
    """The embedded mode's sweeper: ``sweep()`` every ``every_s`` seconds until ``stop()``."""
    while stop is None or not stop():
        started = time.monotonic()
        try:
            sweep()
        except Exception:  # noqa: BLE001 - the loop must outlive one bad pass
            log.exception("hold-queue sweep failed")
        time.sleep(max(every_s - (time.monotonic() - started), 0.1))
