"""Jobs users submit to a site: decide (mold, hold), store, submit, release, cancel.

A job's ``state`` moves forward only, each move a conditional update on a locked row:

    held --release--> submitting --accepted--> submitted --sync--> pending --> running --> finished
      |                   |--refused--> failed (with the backend's message)
      |                   |--not reached--> held again (retry), failed after N attempts
      |                   `--unknown (timeout)--> submitting, in doubt: looked up by tag
      `--cancel--> cancelled          submitted / pending / running --cancel (scancel)--> cancelled

``held -> submitting`` happens under ``select_for_update`` and only from ``held``, so of two
workers releasing the same row one wins and the other sees ``submitting`` and stops: a job
is submitted at most once. The row is committed in ``submitting`` *before* the backend is
called, and the job carries its tag into the batch system, so a crash or an unknown outcome
is reconciled from the tag by the sweep (``services/outcomes.py``) instead of submitting
again. A row is deleted only when the batch system certainly never got the job (an
immediate submission it refused to even hear: 503, and no replay ever saw that row).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from holdqueue.core.backends.base import Backend, BackendError, BackendUnavailable
from holdqueue.core.directives import refused
from holdqueue.models import Site, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services import queue_view
from holdqueue.services.accounts import run_as
from holdqueue.services.conf import setting
from holdqueue.services.errors import (
    BackendDown,
    BackendRefused,
    BadJob,
    JobNotFound,
    SiteBroken,
    WrongState,
)
from holdqueue.services.eta import schedule_release
from holdqueue.services.idempotency import body_hash, replayed
from holdqueue.services.live import decide_for_arrival
from holdqueue.services.outcomes import DOWN, attempt, mark_submitted, retry_or_fail
from jobmolding.core.hold import shifted_release
from queuecast.permissions import visible_to

__all__ = ["mark_submitted", "schedule_release", "setting"]  # re-exported for older imports

log = logging.getLogger(__name__)


def visible_jobs(site: Site, user: Any) -> QuerySet[SiteJob]:
    jobs = SiteJob.objects.filter(site=site).select_related("owner", "site")
    return visible_to(jobs, user)


def get_job(site: Site, user: Any, job_id: int) -> SiteJob:
    try:
        return visible_jobs(site, user).get(pk=job_id)
    except SiteJob.DoesNotExist:
        raise JobNotFound(f"no job {job_id} of yours at site {site.name}") from None


def script_of(site: Site, data: dict[str, Any]) -> str:
    """The batch script: ``script`` as given, or ``command`` wrapped in a sh script.

    Slurm options inside it (``#SBATCH`` lines sbatch would read) are refused, naming the
    line, unless the site allows them (``config.allowed_directives``).
    """
    field = "script" if data.get("script") else "command"
    script = data.get("script") or f"#!/bin/sh\n{data['command']}\n"
    size = len(script.encode())
    limit = setting("QUEUECAST_MAX_SCRIPT_BYTES", 65536)
    if size > limit:
        raise BadJob(f"script is {size} bytes, the limit is {limit}", field=field)
    allowed = list((site.config or {}).get("allowed_directives") or [])
    bad = refused(script, allowed)
    if bad:
        first = bad[0]
        line = first.line - (1 if field == "command" else 0)
        raise BadJob(
            f"{field} line {line}: {first.text.strip()!r} sets Slurm options; Queuecast sets "
            "the job's options itself (site "
            f"{site.name} allows in scripts: {', '.join(allowed) or 'none'})",
            field=field,
            line=line,
        )
    return script


def check_request(site: Site, data: dict[str, Any]) -> None:
    if site.broken:
        raise SiteBroken(f"site {site.name} cannot take jobs: {site.broken}", site=site.name)
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
def submit_job(
    site: Site, user: Any, data: dict[str, Any], key: str | None
) -> tuple[SiteJob, bool]:
    """Decide, store and (now or later) submit; returns (job, created)."""
    check_request(site, data)
    script = script_of(site, data)
    run_as(site, user)  # a site that runs jobs as their owners needs this user's account
    digest = body_hash(data)
    previous = replayed(site, user, key, digest)
    if previous is not None:
        return previous, False
    arrived = bk.now()
    backend = bk.backend_for(site)  # built once: the live queue and the submission use it
    plan = decide_for_arrival(site, backend, user, data, arrived)
    job = SiteJob(
        site=site,
        owner=user,
        name=data.get("name") or "",
        script=script,
        procs_requested=int(data["procs"]),
        procs_chosen=plan.procs,
        time_limit_s=plan.time_limit_s,
        mold=bool(data.get("mold", True)),
        allow_delay=bool(data.get("allow_delay", True)),
        arrived_at=arrived,
        release_at=plan.release_at,
        decision=plan.record,
        idempotency_key=key or None,
        request_hash=digest,
        state=SiteJob.HELD if plan.release_at else SiteJob.SUBMITTING,
    )
    try:
        with transaction.atomic():
            job.save()
            if plan.release_at:
                if plan.head_id is not None or plan.leads:
                    job.head_id = plan.head_id or job.pk
                    job.save(update_fields=["head"])
                transaction.on_commit(lambda: schedule_release(job))
    except IntegrityError:
        again = replayed(site, user, key, digest)
        if again is None:
            raise
        return again, False
    if job.state == SiteJob.SUBMITTING:
        submit_now(job, backend)
    return job, True


def submit_now(job: SiteJob, backend: Backend) -> None:
    """Hand a job that was never held to the backend.

    Not reached (the controller is down): the row goes and the caller gets a 503 — safe,
    since the batch system never had the job and replays never answer with an in-flight row.
    Unknown outcome: the row stays (``submitting``, in doubt) for the sweep to look up.
    """
    outcome = attempt(job, backend)
    if outcome.kind == DOWN:
        SiteJob.objects.filter(pk=job.pk, state=SiteJob.SUBMITTING, attempts=0).delete()
        raise BackendDown(f"site {job.site.name}: {outcome.message}", site=job.site.name)


# --- release --------------------------------------------------------------------------------
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
    outcome = attempt(job)
    if outcome.kind == DOWN:
        retry_or_fail(job, outcome.message)
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
    """Held: never submitted. In the batch system: ``scancel``; its errors say what failed."""
    with transaction.atomic():
        job = SiteJob.objects.select_for_update().select_related("site").get(pk=job.pk)
        if job.state == SiteJob.HELD:
            job.state = SiteJob.CANCELLED
            job.save(update_fields=["state", "updated_at"])
            return job
        if job.state not in SiteJob.IN_BATCH:
            soon = job.state == SiteJob.SUBMITTING
            raise WrongState(
                f"job {job.pk} is {job.state}; only held jobs and jobs in the batch system "
                f"cancel{': try again in a moment' if soon else ''}",
                field="state",
            )
    try:
        bk.backend_for(job.site).cancel(job.backend_job_id)
        queue_view.changed(job.site)
    except BackendUnavailable as exc:
        raise BackendDown(f"site {job.site.name}: {exc}", site=job.site.name) from exc
    except BackendError as exc:
        raise BackendRefused(
            f"site {job.site.name} refused to cancel job {job.backend_job_id}: {exc}",
            site=job.site.name,
        ) from exc
    SiteJob.objects.filter(pk=job.pk, state__in=SiteJob.IN_BATCH).update(
        state=SiteJob.CANCELLED, backend_state="CANCELLED", updated_at=bk.now()
    )
    job.refresh_from_db()
    return job


def hold_queue(site: Site) -> QuerySet[SiteJob]:
    return SiteJob.objects.filter(site=site, state=SiteJob.HELD).order_by("release_at", "id")
