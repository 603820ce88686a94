"""What a site looks like now, and the arrival-time plan of a job: its live snapshot, the
hold it may join, the predictions and the decision."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import F

from holdqueue.core.backends.base import RUNNING, WAITING, BackendJob
from holdqueue.models import Site, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services.history import history_frame
from predictor.core.state.request import JobRequest
from predictor.core.state.snapshot import Snapshot, from_live


@dataclass(frozen=True)
class Plan:
    procs: int
    release_at: dt.datetime | None
    head_id: int | None
    record: dict[str, Any]


def snapshot_now(site: Site, when: dt.datetime) -> tuple[Snapshot, list[BackendJob]]:
    """The site's live state at ``when`` (its history known up to then)."""
    jobs = bk.active_jobs(site)
    live = bk.live_jobs(site, jobs)
    snap = from_live(
        live, bk.site_seconds(site, when), history_frame(site), machine_procs=site.machine_procs
    )
    return snap, jobs


def request_for(site: Site, user_name: str, data: dict[str, Any], at: dt.datetime) -> JobRequest:
    return JobRequest(
        user=bk.user_number(user_name),
        procs=int(data["procs"]),
        req_time_s=float(data["time_limit_s"]),
        submit_s=bk.site_seconds(site, at),
    )


def open_hold(site: Site, when: dt.datetime) -> SiteJob | None:
    """The head held now, if any: an arrival in ``[c, f)`` queues behind it."""
    return (
        SiteJob.objects.filter(
            site=site,
            state=SiteJob.HELD,
            head_id=F("id"),
            arrived_at__lte=when,
            release_at__gt=when,
        )
        .order_by("-arrived_at")
        .first()
    )


def decide_for_arrival(site: Site, user: Any, data: dict[str, Any], arrived: dt.datetime) -> Plan:
    from holdqueue.services.decide import decide
    from holdqueue.services.jobs import follower_release

    mold_job, allow_delay = bool(data.get("mold", True)), bool(data.get("allow_delay", True))
    if not mold_job and not allow_delay:
        return Plan(int(data["procs"]), None, None, {"molding": None, "delay": None})
    snap, _ = snapshot_now(site, arrived)
    request = request_for(site, user.get_username(), data, arrived)
    head = open_hold(site, arrived) if allow_delay else None
    decision = decide(
        site,
        snap,
        request,
        mold_job=mold_job,
        allow_delay=allow_delay and head is None,
        candidates=data.get("candidates"),
    )
    if head is not None:
        record = {
            **decision.record,
            "hold": {
                "follows": head.pk,
                "reason": "arrived while "
                f"job {head.pk} is held (seed: the hold queue keeps the arrival spacing)",
            },
        }
        return Plan(decision.procs, follower_release(head, arrived), head.pk, record)
    release = bk.site_datetime(site, decision.release_s) if decision.delayed else None
    return Plan(decision.procs, release, None, decision.record)


def site_status(site: Site) -> dict[str, Any]:
    """Queue length, running jobs and utilisation now (asks the backend)."""
    jobs = bk.active_jobs(site)
    running = [j for j in jobs if j.state == RUNNING]
    busy = sum(j.procs for j in running)
    return {
        "queue_length": sum(j.state == WAITING for j in jobs),
        "running_jobs": len(running),
        "busy_procs": busy,
        "utilisation": busy / site.machine_procs if site.machine_procs else None,
        "held_jobs": SiteJob.objects.filter(site=site, state=SiteJob.HELD).count(),
        "at": bk.now(),
    }


def queue_body(site: Site) -> dict[str, Any]:
    jobs = bk.active_jobs(site)
    jobs.sort(key=lambda j: (j.state != RUNNING, j.submit_ts, j.backend_id))
    return {
        "at": bk.now(),
        "machine_procs": site.machine_procs,
        "jobs": [_job_body(j) for j in jobs],
    }


def _job_body(j: BackendJob) -> dict[str, Any]:
    def when(ts: float | None) -> dt.datetime | None:
        return None if ts is None else dt.datetime.fromtimestamp(ts, tz=dt.UTC)

    limit = j.time_limit_s if np.isfinite(j.time_limit_s) else None
    return {
        "backend_job_id": j.backend_id,
        "tag": j.tag,
        "name": j.name,
        "user": j.user,
        "procs": j.procs,
        "time_limit_s": limit,
        "state": j.state,
        "backend_state": j.outcome,
        "submitted_at": when(j.submit_ts),
        "started_at": when(j.start_ts),
    }
