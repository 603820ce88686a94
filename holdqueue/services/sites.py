"""Creating sites (staff) and warming a site's history from a stored trace."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db import models, transaction

from holdqueue.models import Site, SiteHistory, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services.errors import BadJob, WrongState
from traces.models import Trace


def create_site(data: dict[str, Any], user: Any) -> Site:
    """A site row, and (``warm_up``) its history from the trace, all or nothing."""
    trace = data.get("trace")
    if data["backend"] == "simulated" and trace is None:
        raise BadJob("a simulated site needs a trace to replay", field="trace")
    with transaction.atomic():
        site = Site.objects.create(
            name=data["name"],
            backend=data["backend"],
            machine_procs=data.get("machine_procs") or (trace.machine_procs if trace else 0),
            partition=data.get("partition", ""),
            config=data.get("config") or {},
            trace=trace,
            epoch=bk.now(),
            created_by=user,
        )
        if site.machine_procs < 1:
            raise BadJob(
                "machine_procs is required (the trace does not say)", field="machine_procs"
            )
        if trace is not None and data.get("warm_up", True):
            warm_history(site, trace)
    return site


def warm_history(site: Site, trace: Trace) -> int:
    """Copy the trace's finished jobs as the site's past: shifted so the last one ends at the
    site's epoch (negative site seconds), so the predictor has a history from the first hour.

    A simulated site plays its trace ``speed`` times faster, so its live jobs last
    ``1 / speed`` of their trace durations: the copied past is scaled the same way, and the
    predictor sees one time scale (wall-clock seconds).
    """
    from traces.services.queries import jobs_frame

    jobs = jobs_frame(trace)
    jobs = jobs[(jobs["wait_time"] >= 0) & (jobs["run_time"] >= 0)]
    if jobs.empty:
        return 0
    end = (jobs["submit_time"] + jobs["wait_time"] + jobs["run_time"]).to_numpy(float)
    shift = -float(end.max())
    scale = (
        1.0 / float((site.config or {}).get("speed", 1.0)) if site.backend == "simulated" else 1.0
    )
    procs = np.where(jobs["allocated_procs"] > 0, jobs["allocated_procs"], jobs["requested_procs"])
    rows = [
        SiteHistory(
            site=site,
            job_key=f"trace-{trace.pk}-{int(j)}",
            user=f"trace-user-{int(u)}",
            submit_s=(float(s) + shift) * scale,
            wait_s=float(w) * scale,
            run_s=float(r) * scale,
            procs=int(p),
            req_time_s=float(q) * scale if q > 0 else float(q),
            status=int(st),
        )
        for j, u, s, w, r, p, q, st in zip(
            jobs["job_id"],
            jobs["user_id"],
            jobs["submit_time"],
            jobs["wait_time"],
            jobs["run_time"],
            procs,
            jobs["requested_time"],
            jobs["status"],
            strict=True,
        )
    ]
    SiteHistory.objects.bulk_create(rows, batch_size=5000)
    return len(rows)


def delete_site(site: Site, *, force: bool = False) -> None:
    """Staff delete a site with its jobs and history (409 while jobs are still live).

    Held and submitting jobs would be lost and jobs in the batch system would run on
    untracked: the site is deleted only without them, or with ``force`` (its held jobs are
    then never submitted, and jobs in the batch system run on without Queuecast).
    """
    live = dict(
        SiteJob.objects.filter(site=site)
        .exclude(state__in=(SiteJob.FINISHED, SiteJob.CANCELLED, SiteJob.FAILED))
        .values_list("state")
        .annotate(n=models.Count("id"))
    )
    if live and not force:
        counts = ", ".join(f"{n} {state}" for state, n in sorted(live.items()))
        raise WrongState(
            f"site {site.name} still has jobs ({counts}): cancel them or wait, or delete with "
            "force=true (held jobs are then never submitted; jobs in the batch system run on "
            "untracked)",
            field="jobs",
        )
    site.delete()
