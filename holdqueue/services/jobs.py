"""Jobs users submit to a site: decide (mold, hold), store, submit, release, cancel.

A job's ``state`` moves forward only, each move a conditional update on a locked row:

    held --release--> submitting --backend accepted--> submitted
      |                   |--backend refused--> failed (with the backend's message)
      |                   `--backend down--> held again (retry), failed after N attempts
      `--cancel--> cancelled                    submitted --cancel (scancel)--> cancelled

``held -> submitting`` happens under ``select_for_update`` and only from ``held``, so of two
workers releasing the same row one wins and the other sees ``submitting`` and stops: a job
is submitted at most once. The row is committed in ``submitting`` *before* the backend is
called, and the job carries its tag into the batch system, so a crash in between is
reconciled from the tag by the sweep (``services/sweep.py``) instead of submitting again.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from holdqueue.core.backends.base import BackendUnavailable, JobSpec, SubmissionRejected
from holdqueue.core.holdqueue import shifted_release
from holdqueue.models import Site, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services.errors import BackendDown, BadJob, JobNotFound, WrongState
from holdqueue.services.live import decide_for_arrival
from queuecast.longrun import task_named

log = logging.getLogger(__name__)


def setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def visible_jobs(site: Site, user: Any) -> QuerySet[SiteJob]:
    jobs = SiteJob.objects.filter(site=site).select_related("owner")
    return jobs if user.is_staff else jobs.filter(owner=user)


def get_job(site: Site, user: Any, job_id: int) -> SiteJob:
    try:
        return visible_jobs(site, user).get(pk=job_id)
    except SiteJob.DoesNotExist:
        raise JobNotFound(f"no job {job_id} of yours at site {site.name}") from None


def script_of(data: dict[str, Any]) -> str:
    """The batch script: ``script`` as given, or ``command`` wrapped in a sh script."""
    script = data.get("script") or ""
    if not script:
        script = f"#!/bin/sh\n{data['command']}\n"
    size = len(script.encode())
    limit = setting("QUEUECAST_MAX_SCRIPT_BYTES", 65536)
    if size > limit:
        raise BadJob(f"script is {size} bytes, the limit is {limit}", field="script")
    return script


def check_request(site: Site, data: dict[str, Any]) -> None:
    procs = int(data["procs"])
    if not 1 <= procs <= site.machine_procs:
        raise BadJob(
            f"procs must be in 1..{site.machine_procs} at site {site.name}, got {procs}",
            field="procs",
        )
    bad = [c for c in data.get("candidates") or [] if not 1 <= int(c) <= site.machine_procs]
    if bad:
        raise BadJob(
            f"candidates must be in 1..{site.machine_procs}, got {bad}", field="candidates"
        )


# --- create ---------------------------------------------------------------------------------
def replayed(site: Site, user: Any, key: str | None, data: dict[str, Any]) -> SiteJob | None:
    """The job a retried request (same Idempotency-Key) created, if any."""
    if not key:
        return None
    job = SiteJob.objects.filter(site=site, owner=user, idempotency_key=key).first()
    if job is not None and (job.procs_requested, job.time_limit_s) != (
        int(data["procs"]),
        int(data["time_limit_s"]),
    ):
        raise WrongState(
            "Idempotency-Key was used for a different request", field="Idempotency-Key"
        )
    return job


def submit_job(
    site: Site, user: Any, data: dict[str, Any], key: str | None
) -> tuple[SiteJob, bool]:
    """Decide, store and (now or later) submit; returns (job, created)."""
    check_request(site, data)
    script = script_of(data)
    previous = replayed(site, user, key, data)
    if previous is not None:
        return previous, False
    arrived = bk.now()
    plan = decide_for_arrival(site, user, data, arrived)
    job = SiteJob(
        site=site,
        owner=user,
        name=data.get("name") or "",
        script=script,
        procs_requested=int(data["procs"]),
        procs_chosen=plan.procs,
        time_limit_s=int(data["time_limit_s"]),
        mold=bool(data.get("mold", True)),
        allow_delay=bool(data.get("allow_delay", True)),
        arrived_at=arrived,
        release_at=plan.release_at,
        decision=plan.record,
        idempotency_key=key or None,
        state=SiteJob.HELD if plan.release_at else SiteJob.SUBMITTING,
    )
    try:
        with transaction.atomic():
            job.save()
            if plan.head_id is not None or plan.release_at:
                job.head_id = plan.head_id or job.pk
                job.save(update_fields=["head"])
                transaction.on_commit(lambda: schedule_release(job))
    except IntegrityError:
        again = replayed(site, user, key, data)
        if again is None:
            raise
        return again, False
    if job.state == SiteJob.SUBMITTING:
        submit_now(job)
    return job, True


def submit_now(job: SiteJob) -> None:
    """Hand a job that was never held to the backend; a backend that is down leaves no row."""
    try:
        _send(job)
    except BackendUnavailable as exc:
        job.delete()
        raise BackendDown(f"site {job.site.name}: {exc}", site=job.site.name) from exc


def _spec(job: SiteJob) -> JobSpec:
    return JobSpec(
        tag=job.tag,
        name=job.name,
        procs=job.procs_chosen,
        time_limit_s=job.time_limit_s,
        script=job.script,
        user=job.owner.get_username(),
    )


def _send(job: SiteJob) -> None:
    """Submit a row in ``submitting``; record the id, or ``failed`` if the backend refused."""
    try:
        backend_id = bk.backend_for(job.site).submit(_spec(job))
    except SubmissionRejected as exc:
        SiteJob.objects.filter(pk=job.pk, state=SiteJob.SUBMITTING).update(
            state=SiteJob.FAILED, error=str(exc)[:2000]
        )
        job.refresh_from_db()
        return
    mark_submitted(job, backend_id)


def mark_submitted(job: SiteJob, backend_id: str) -> None:
    SiteJob.objects.filter(pk=job.pk, state=SiteJob.SUBMITTING).update(
        state=SiteJob.SUBMITTED, backend_job_id=backend_id, submitted_at=bk.now(), error=""
    )
    job.refresh_from_db()


# --- release --------------------------------------------------------------------------------
def schedule_release(job: SiteJob) -> None:
    """A Celery task at the release time (broker mode); the sweep covers everything else."""
    if setting("CELERY_TASK_ALWAYS_EAGER", True):
        return  # in-process: an eager task would run now, not at its ETA; the sweep releases
    try:
        task_named("holdqueue.tasks.release_site_job").apply_async((job.pk,), eta=job.release_at)
    except Exception as exc:  # noqa: BLE001 - broker down: the row stays, the sweep releases it
        log.warning(
            "release task for job %s not queued (%s); the sweep will release it", job.pk, exc
        )


def claim_release(job_id: int, *, early: bool = False) -> SiteJob | None:
    """``held -> submitting`` under a row lock when due (or ``early``); None if not ours."""
    with transaction.atomic():
        job = SiteJob.objects.select_for_update().select_related("site", "owner").get(pk=job_id)
        current = bk.now()
        if job.state != SiteJob.HELD or (not early and job.release_at > current):
            return None
        if early and job.head_id == job.pk:
            shift_followers(job, current)
        job.state = SiteJob.SUBMITTING
        job.attempts += 1
        job.save(update_fields=["state", "attempts", "updated_at"])
    return job


def release_job(job_id: int, *, early: bool = False) -> SiteJob | None:
    """Release one held job if it is due; exactly once across workers (see module doc)."""
    job = claim_release(job_id, early=early)
    if job is None:
        return None
    try:
        _send(job)
    except BackendUnavailable as exc:
        retry_or_fail(job, str(exc))
    return job


def release_now(job: SiteJob) -> SiteJob:
    """The owner releases a held job early (``POST .../release``); followers keep spacing."""
    if job.state != SiteJob.HELD:
        raise WrongState(
            f"job {job.pk} is {job.state}; only a held job can be released", field="state"
        )
    released = release_job(job.pk, early=True)
    if released is None:  # a worker released or someone cancelled it a moment ago
        job.refresh_from_db()
        raise WrongState(
            f"job {job.pk} is {job.state}; only a held job can be released", field="state"
        )
    released.refresh_from_db()
    if released.state == SiteJob.HELD:  # the backend was down: held again, say why
        raise BackendDown(f"site {job.site.name}: {released.error}", site=job.site.name)
    return released


def retry_or_fail(job: SiteJob, message: str) -> None:
    """The backend was down at release: hold again a little later, or fail after N tries."""
    if job.attempts >= setting("QUEUECAST_RELEASE_ATTEMPTS", 3):
        SiteJob.objects.filter(pk=job.pk, state=SiteJob.SUBMITTING).update(
            state=SiteJob.FAILED, error=message[:2000]
        )
    else:
        retry_at = bk.now() + dt.timedelta(seconds=setting("QUEUECAST_RELEASE_RETRY_S", 30))
        SiteJob.objects.filter(pk=job.pk, state=SiteJob.SUBMITTING).update(
            state=SiteJob.HELD, release_at=retry_at, error=message[:2000]
        )
    job.refresh_from_db()
    if job.state == SiteJob.HELD:
        schedule_release(job)


def shift_followers(head: SiteJob, new_release: dt.datetime) -> None:
    """The head goes early: its followers keep their spacing behind it (seed's rule)."""
    for f in (
        SiteJob.objects.select_for_update()
        .filter(head=head, state=SiteJob.HELD)
        .exclude(pk=head.pk)
    ):
        moved = shifted_release(
            f.release_at.timestamp(),
            head.release_at.timestamp(),
            new_release.timestamp(),
            f.arrived_at.timestamp(),
        )
        f.release_at = dt.datetime.fromtimestamp(moved, tz=dt.UTC)
        f.save(update_fields=["release_at", "updated_at"])
        transaction.on_commit(lambda f=f: schedule_release(f))


# --- cancel ---------------------------------------------------------------------------------
def cancel_job(job: SiteJob) -> SiteJob:
    with transaction.atomic():
        job = SiteJob.objects.select_for_update().select_related("site").get(pk=job.pk)
        if job.state == SiteJob.HELD:
            job.state = SiteJob.CANCELLED
            job.save(update_fields=["state", "updated_at"])
            return job
        if job.state != SiteJob.SUBMITTED:
            raise WrongState(
                f"job {job.pk} is {job.state}; only held or submitted jobs cancel", field="state"
            )
    try:
        bk.backend_for(job.site).cancel(job.backend_job_id)
    except BackendUnavailable as exc:
        raise BackendDown(f"site {job.site.name}: {exc}", site=job.site.name) from exc
    SiteJob.objects.filter(pk=job.pk, state=SiteJob.SUBMITTED).update(
        state=SiteJob.CANCELLED, backend_state="CANCELLED"
    )
    job.refresh_from_db()
    return job


def hold_queue(site: Site) -> QuerySet[SiteJob]:
    return SiteJob.objects.filter(site=site, state=SiteJob.HELD).order_by("release_at", "id")
