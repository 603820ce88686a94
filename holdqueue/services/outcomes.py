"""What a job row becomes after each answer of its batch system: the rules in one place.

A submission attempt (the row is in ``submitting``, committed before the backend is called):

=====================================  ===================================================
the batch system...                    the row
=====================================  ===================================================
accepted the job                       ``submitted`` with its id
refused it (bad partition, limit...)   ``failed`` with the message
was not reached (connection refused)   ``held`` again ``QUEUECAST_RELEASE_RETRY_S`` later;
                                       ``failed`` after ``QUEUECAST_RELEASE_ATTEMPTS``
may or may not have it (timeout...)    stays ``submitting``, ``in_doubt``: nothing is sent
                                       again until the tag has been looked up
=====================================  ===================================================

A lookup by tag (:func:`reconcile`, the sweep, for rows in ``submitting`` longer than the
submit lease): found -> ``submitted`` with the found id; not found -> ``held`` for a new
attempt, or ``failed`` (saying nothing was submitted) once the attempts are used up; the
lookup itself fails -> unchanged, looked up again at the next sweep. So a job whose fate is
unknown is never sent twice and never given up while a copy may be running.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from holdqueue.core.backends.base import (
    Backend,
    BackendUnavailable,
    JobSpec,
    SubmissionRejected,
    SubmissionUncertain,
)
from holdqueue.models import SiteJob
from holdqueue.services import backends as bk
from holdqueue.services import queue_view
from holdqueue.services.accounts import run_as
from holdqueue.services.conf import setting
from holdqueue.services.eta import schedule_release
from queuecast.errors import QueuecastError

log = logging.getLogger(__name__)

SUBMITTED, FAILED, DOWN, DOUBT = "submitted", "failed", "down", "doubt"


@dataclass(frozen=True)
class Outcome:
    kind: str  # SUBMITTED, FAILED, DOWN (not reached: safe to retry) or DOUBT
    message: str = ""


def spec_for(job: SiteJob) -> JobSpec:
    return JobSpec(
        tag=job.tag,
        name=job.name,
        procs=job.procs_chosen,
        time_limit_s=job.time_limit_s,
        script=job.script,
        user=job.owner.get_username(),
        run_as=run_as(job.site, job.owner),
    )


def attempt(job: SiteJob, backend: Backend | None = None) -> Outcome:
    """Submit a row in ``submitting`` once and record what the batch system said (to
    ``backend`` when the caller has built it already, else the site's)."""
    try:
        spec = spec_for(job)
    except QueuecastError as exc:  # no cluster account (any more): it can never go
        fail(job, exc.detail)
        return Outcome(FAILED, exc.detail)
    try:
        backend_id = (backend or bk.backend_for(job.site)).submit(spec)
    except SubmissionRejected as exc:
        fail(job, str(exc))
        return Outcome(FAILED, str(exc))
    except SubmissionUncertain as exc:
        queue_view.changed(job.site)  # it may be in the queue
        mark_in_doubt(job, str(exc))
        return Outcome(DOUBT, str(exc))
    except (BackendUnavailable, bk.BackendDown) as exc:
        return Outcome(DOWN, getattr(exc, "detail", None) or str(exc))
    queue_view.changed(job.site)
    mark_submitted(job, backend_id)
    return Outcome(SUBMITTED)


def _update(job: SiteJob, **fields: object) -> int:
    """A conditional move out of ``submitting``; the job object is refreshed."""
    done = SiteJob.objects.filter(pk=job.pk, state=SiteJob.SUBMITTING).update(
        updated_at=bk.now(), **fields
    )
    job.refresh_from_db()
    return done


def mark_submitted(job: SiteJob, backend_id: str) -> None:
    _update(
        job,
        state=SiteJob.SUBMITTED,
        backend_job_id=backend_id,
        submitted_at=bk.now(),
        error="",
        in_doubt=False,
    )


def fail(job: SiteJob, message: str) -> None:
    _update(job, state=SiteJob.FAILED, error=message[:2000], in_doubt=False)


def mark_in_doubt(job: SiteJob, message: str) -> None:
    note = (
        f"{message} — the batch system may have the job: Queuecast looks its tag up "
        f"before trying again (after {setting('QUEUECAST_SUBMIT_LEASE_S', 60)} s)"
    )
    _update(job, in_doubt=True, error=note[:2000])


def retry_or_fail(job: SiteJob, message: str) -> None:
    """The batch system was not reached: hold again a little later, or fail after N tries."""
    if job.attempts >= setting("QUEUECAST_RELEASE_ATTEMPTS", 3):
        fail(job, f"{message} (gave up after {job.attempts} attempts; nothing was submitted)")
        return
    retry_at = bk.now() + dt.timedelta(seconds=setting("QUEUECAST_RELEASE_RETRY_S", 30))
    _update(job, state=SiteJob.HELD, release_at=retry_at, error=message[:2000], in_doubt=False)
    schedule_release(job)


def reconcile(job: SiteJob) -> str:
    """Look a job stuck in ``submitting`` up by its tag; returns what it became.

    Raises :class:`BackendUnavailable` / ``BackendDown`` when the lookup cannot be made (the
    row is left as it is and looked up again later).
    """
    since = job.arrived_at.timestamp() - 60.0
    found = bk.backend_for(job.site).find(job.tag, since)
    if found is not None:
        mark_submitted(job, found.backend_id)
    elif job.attempts >= setting("QUEUECAST_RELEASE_ATTEMPTS", 3):
        reason = job.error or "the submission was interrupted"
        fail(job, f"{reason}; no job carries its tag {job.tag} (looked up): nothing runs")
    else:
        _update(job, state=SiteJob.HELD, release_at=bk.now(), in_doubt=False)
        schedule_release(job)
    log.info("job %s reconciled by tag: %s", job.pk, job.state)
    return job.state
