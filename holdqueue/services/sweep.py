"""The periodic sweep: settle broken sites, release every held job that is due (a lost ETA
task or a restart loses nothing), look jobs stuck in ``submitting`` up by their tags, queue
the release tasks that came close, and keep each site's history and our jobs' states in step
with the batch system.

One bad site or row never stops the others: every job and every site is handled on its own,
and its exception is logged, counted (``errors`` in the result; ``Site.last_error`` and
``Site.error_count`` for a site) and retried at the next pass. A job whose release raised is
left ``submitting`` and looked up by tag after the lease like any other.

Runs from Celery beat in broker mode and from ``manage.py sweep_holdqueue --loop`` (started
by ``scripts/serve``) in the embedded mode, where ``services/sweeper.py`` runs the same steps
in a thread pool (``sweep_forever``) so one hung ``sbatch`` holds one thread, not every release.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from django.db.models import F

from holdqueue.core.backends.base import FINISHED, BackendError, BackendUnavailable
from holdqueue.models import Site, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services import queue_view
from holdqueue.services.conf import setting
from holdqueue.services.errors import BackendDown
from holdqueue.services.eta import queue_upcoming
from holdqueue.services.health import check_site
from holdqueue.services.history import record_active, record_finished_and_extras, sync_since
from holdqueue.services.jobs import release_job
from holdqueue.services.jobstate import note_extra_copy
from holdqueue.services.outcomes import reconcile

log = logging.getLogger(__name__)
WAITING_FOR_BACKEND = (BackendUnavailable, BackendDown)


def due_ids(limit: int = 500) -> list[int]:
    due = SiteJob.objects.filter(state=SiteJob.HELD, release_at__lte=bk.now())
    return list(due.order_by("release_at", "id").values_list("id", flat=True)[:limit])


def stale_ids(limit: int = 500) -> list[int]:
    """Rows in ``submitting`` for longer than the lease (which exceeds any tool's timeout,
    so a submission still in flight is never taken for a lost one)."""
    lease = dt.timedelta(seconds=setting("QUEUECAST_SUBMIT_LEASE_S", 60))
    stale = SiteJob.objects.filter(state=SiteJob.SUBMITTING, updated_at__lt=bk.now() - lease)
    return list(stale.order_by("updated_at", "id").values_list("id", flat=True)[:limit])


def each(ids: list[Any], step: Callable[[Any], Any], what: str, errors: list[str]) -> int:
    """``step`` on every item, each on its own; how many returned something true."""
    done = 0
    for item in ids:
        try:
            done += bool(step(item))
        except WAITING_FOR_BACKEND as exc:
            log.info("%s %s waits for its batch system: %s", what, item, exc)
        except Exception as exc:  # one bad row never stops the others
            log.exception("sweep: %s %s failed", what, item)
            errors.append(f"{what} {item}: {exc}")
            if isinstance(item, int):
                SiteJob.objects.filter(pk=item).update(error=f"sweep: {exc}"[:2000])
    return done


def release_due(limit: int = 500, errors: list[str] | None = None) -> int:
    """Release the held jobs whose time has come, oldest first; returns how many went."""
    return each(due_ids(limit), release_job, "release of job", _list(errors))


def reconcile_one(job_id: int) -> bool:
    job = SiteJob.objects.select_related("site", "owner").get(pk=job_id)
    if job.state != SiteJob.SUBMITTING:
        return False
    reconcile(job)
    return True


def reconcile_submitting(errors: list[str] | None = None) -> int:
    """Jobs left in ``submitting`` longer than the lease: found by tag, held again, or failed."""
    return each(stale_ids(), reconcile_one, "lookup of job", _list(errors))


def sync_site(site: Site) -> dict[str, Any]:
    """Read the backend's live and finished jobs into our rows and the site's history."""
    backend = bk.backend_for(site)
    until = bk.now()
    active = backend.active()
    finished = backend.finished_since(sync_since(site))
    extras = record_active(site, active)
    added, more = record_finished_and_extras(site, finished, until)
    for j in {e.backend_id: e for e in extras + more}.values():
        try:
            if j.state != FINISHED:
                backend.cancel(j.backend_id)
                queue_view.changed(site)
            note_extra_copy(site, j, cancelled=True)
        except BackendError as exc:
            note_extra_copy(site, j, cancelled=False, why=str(exc))
    return {"site": site.name, "active": len(active), "history_added": added}


def sites_to_sync(min_interval_s: float) -> list[Site]:
    cutoff = bk.now() - dt.timedelta(seconds=min_interval_s)
    return [
        s
        for s in Site.objects.filter(broken="")
        if not (s.synced_until and s.synced_until > cutoff)
    ]


def sync_one(site: Site) -> dict[str, Any]:
    """:func:`sync_site`, with the site's failure recorded (and cleared when it works)."""
    try:
        result = sync_site(site)
    except Exception as exc:
        Site.objects.filter(pk=site.pk).update(
            last_error=str(getattr(exc, "detail", exc))[:2000], error_count=F("error_count") + 1
        )
        raise
    if site.error_count:
        Site.objects.filter(pk=site.pk).update(last_error="", error_count=0)
    return result


def sync_sites(min_interval_s: float, errors: list[str] | None = None) -> list[dict[str, Any]]:
    """Sync every site last synced more than ``min_interval_s`` ago, each on its own."""
    out: list[dict[str, Any]] = []

    def step(site: Site) -> bool:
        out.append(sync_one(site))
        return True

    each(sites_to_sync(min_interval_s), step, "sync of site", _list(errors))
    return out


def check_sites(errors: list[str] | None = None) -> int:
    """Mark broken sites (and fail their held jobs); how many are broken."""
    return each(list(Site.objects.all()), check_site, "check of site", _list(errors))


def sweep() -> dict[str, Any]:
    """One pass: broken sites, releases (time-critical), lookups, tasks, then sync."""
    errors: list[str] = []
    broken = check_sites(errors)
    released = release_due(errors=errors)
    reconciled = reconcile_submitting(errors)
    queued: list[int] = []
    each([None], lambda _: queued.append(queue_upcoming()), "queueing of release tasks", errors)
    synced = sync_sites(setting("QUEUECAST_SITE_SYNC_S", 60), errors)
    return {
        "released": released,
        "reconciled": reconciled,
        "queued": sum(queued),
        "synced": len(synced),
        "broken_sites": broken,
        "errors": len(errors),
    }


def _list(errors: list[str] | None) -> list[str]:
    return errors if errors is not None else []
