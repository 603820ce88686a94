"""Celery ETA tasks that release held jobs on the second (broker mode only).

Redis hands an unacknowledged message to a worker again every visibility timeout
(``QUEUECAST_CELERY_VISIBILITY_TIMEOUT``), so a task whose ETA lies further out would be
delivered once per timeout for as long as the job is held, each copy kept in a worker's
memory. A task is therefore queued only when the release is within
``QUEUECAST_RELEASE_TASK_HORIZON_S`` (half the timeout); the sweep queues the others when
they come that close (:func:`queue_upcoming`), once per release time
(``SiteJob.release_task_at``). The sweep releases anything overdue either way, so a lost
task (a broker restart) delays nothing by more than one sweep period.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.db.models import F, Q

from holdqueue.models import SiteJob
from holdqueue.services import backends as bk
from holdqueue.services.conf import setting
from queuecast.longrun import task_named

log = logging.getLogger(__name__)


def horizon() -> dt.timedelta:
    return dt.timedelta(seconds=setting("QUEUECAST_RELEASE_TASK_HORIZON_S", 150))


def schedule_release(job: SiteJob) -> bool:
    """Queue ``job``'s release task if it is due within the horizon; True if queued."""
    if setting("CELERY_TASK_ALWAYS_EAGER", True):
        return False  # in-process: an eager task would run now, not at its ETA; the sweep releases
    if job.state != SiteJob.HELD or job.release_at is None or job.release_at > bk.now() + horizon():
        return False
    try:
        task_named("holdqueue.tasks.release_site_job").apply_async((job.pk,), eta=job.release_at)
    except Exception as exc:  # broker down: the row stays, the sweep releases it
        log.warning(
            "release task for job %s not queued (%s); the sweep will release it", job.pk, exc
        )
        return False
    SiteJob.objects.filter(pk=job.pk, release_at=job.release_at).update(
        release_task_at=job.release_at
    )
    return True


def queue_upcoming(limit: int = 500) -> int:
    """Queue the tasks of held jobs that came within the horizon; how many were queued."""
    if setting("CELERY_TASK_ALWAYS_EAGER", True):
        return 0
    rows = (
        SiteJob.objects.filter(state=SiteJob.HELD, release_at__lte=bk.now() + horizon())
        .filter(Q(release_task_at__isnull=True) | ~Q(release_task_at=F("release_at")))
        .order_by("release_at", "id")[:limit]
    )
    return sum(schedule_release(job) for job in rows)
