"""What a site looks like now, and the arrival-time plan of a job: its live snapshot, the
hold it may join, the predictions and the decision."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from holdqueue.core.backends.base import RUNNING, WAITING, Backend, BackendJob
from holdqueue.models import Site, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services import predict as site_predict
from holdqueue.services import queue_view
from holdqueue.services.begin import begin_record, requested_begin
from holdqueue.services.decide import decide
from holdqueue.services.errors import WrongState
from holdqueue.services.history import history_frame
from holdqueue.services.holds import follower_release, open_hold
from holdqueue.services.snapshot import live_snapshot, request_for
from holdqueue.services.told import told_record
from jobmolding.core.live_bundle import queue_starts
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import from_live
from queuecast.errors import QueuecastError
from traces.core.swf import SWF_FIELDS


@dataclass(frozen=True)
class Plan:
    procs: int
    release_at: dt.datetime | None
    head_id: int | None
    record: dict[str, Any]
    time_limit_s: int
    leads: bool = True  # a hold Queuecast made heads the hold queue; a ``begin`` one does not


def decide_for_arrival(
    site: Site, backend: Backend, user: Any, data: dict[str, Any], arrived: dt.datetime
) -> Plan:
    """The arrival-time plan of a job. The site's inputs are read here once, then handed
    down as plain data: the active jobs (from ``backend``, the caller's, which also submits
    the job), the history (one read: the snapshot's and, when a fit is due, the bundle's),
    the site's bundle as a plain predictor (``jobmolding.core.live_bundle.LiveBundle``)."""
    begin = requested_begin(data, arrived)
    if begin is not None:  # the owner's own start time: held until then, submitted as asked
        limit = int(data["time_limit_s"])
        return Plan(int(data["procs"]), begin, None, begin_record(begin), limit, leads=False)
    mold_job, allow_delay = bool(data.get("mold", True)), bool(data.get("allow_delay", True))
    if not mold_job and not allow_delay:
        limit = int(data["time_limit_s"])
        return Plan(
            int(data["procs"]), None, None, plain_record(site, backend, user, data, arrived), limit
        )
    history = history_frame(site)
    snap = live_snapshot(site, arrived, bk.active_jobs(site, backend), history)
    predictor = site_predict.site_answers(site, history)
    request = request_for(site, user.get_username(), data, arrived)
    head = open_hold(site, arrived) if allow_delay else None
    decision = decide(
        site,
        snap,
        request,
        predictor,
        mold_job=mold_job,
        allow_delay=allow_delay and head is None,
        candidates=data.get("candidates"),
    )
    if head is not None:  # submitted at the head's release: nothing told for that state
        record = {
            **decision.record,
            "hold": {
                "follows": head.pk,
                "reason": "arrived while "
                f"job {head.pk} is held (seed: the hold queue keeps the arrival spacing)",
            },
        }
        after_head = follower_release(head, arrived)
        return Plan(decision.procs, after_head, head.pk, record, int(decision.time_limit_s))
    if decision.delayed:
        release = bk.site_datetime(site, decision.release_s)
        return Plan(decision.procs, release, None, decision.record, int(decision.time_limit_s))
    record = {**decision.record, **told_record(predictor, snap.time_s, decision.procs)}
    return Plan(decision.procs, None, None, record, int(decision.time_limit_s))


def plain_record(
    site: Site, backend: Backend, user: Any, data: dict[str, Any], arrived: dt.datetime
) -> dict[str, Any]:
    """The decision record of a job submitted as asked (no molding, no hold): its arrival-time
    ``prediction``, so its page can show the prediction's error once it starts (the wait and
    runtime the site's bundle answers for its size on the live queue), and what it was
    ``told`` (``holdqueue.services.told``). The prediction is None when the site cannot
    predict yet (too little history) or its batch system does not answer: the job goes
    anyway."""
    record: dict[str, Any] = {"molding": None, "delay": None, "prediction": None}
    try:
        predictor = site_predict.site_answers(site)
        jobs = bk.active_jobs(site, backend)
    except QueuecastError:
        return record
    # the bundle answers from the history it was fitted on: the snapshot needs none
    no_history = pd.DataFrame({f: np.zeros(0) for f in SWF_FIELDS})
    snap = live_snapshot(site, arrived, jobs, no_history)
    request = request_for(site, user.get_username(), data, arrived)
    waits, runtimes = predictor.predict(snap, RequestBatch.of([request]))
    record["prediction"] = {
        "procs": request.procs,
        "wait_s": float(waits[0]),
        "runtime_s": float(runtimes[0].point_s),
        "response_s": float(waits[0] + runtimes[0].point_s),
    }
    return {**record, **told_record(predictor, snap.time_s, request.procs)}


def site_status(site: Site) -> dict[str, Any]:
    """Queue length, running jobs and utilisation now (the batch queue as last read:
    :mod:`holdqueue.services.queue_view`)."""
    view = queue_view.current(site)
    jobs = view.jobs
    running = [j for j in jobs if j.state == RUNNING]
    busy = sum(j.procs for j in running)
    return {
        "queue_length": sum(j.state == WAITING for j in jobs),
        "running_jobs": len(running),
        "busy_procs": busy,
        "utilisation": busy / site.machine_procs if site.machine_procs else None,
        "held_jobs": SiteJob.objects.filter(site=site, state=SiteJob.HELD).count(),
        "at": bk.now(),
        "queue_read_at": view.read_at,
    }


def queue_body(site: Site, viewer: Any) -> dict[str, Any]:
    """The site's batch queue now, as ``viewer`` may see it: the name, user and tag of a
    job are shown to staff and to the owner of the Queuecast job behind it, blank to
    anyone else (the API and the pages show the same, one rule). The batch queue is the
    one last read (:mod:`holdqueue.services.queue_view`)."""
    view = queue_view.current(site)
    jobs = sorted(view.jobs, key=lambda j: (j.state != RUNNING, j.submit_ts, j.backend_id))
    starts = predicted_starts(site, jobs)
    own = set(
        SiteJob.objects.filter(
            site=site, owner=viewer, tag__in=[j.tag for j in jobs if j.tag]
        ).values_list("tag", flat=True)
    )
    return {
        "at": bk.now(),
        "queue_read_at": view.read_at,
        "machine_procs": site.machine_procs,
        "jobs": [
            {
                **_job_body(j, mine=bool(j.tag) and j.tag in own, staff=viewer.is_staff),
                "predicted_start": starts.get(j.backend_id),
            }
            for j in jobs
        ],
    }


def predicted_starts(site: Site, jobs: list[BackendJob]) -> dict[str, dt.datetime]:
    """Predicted start of each waiting job (by backend id); empty without a site model."""
    if not any(j.state == WAITING for j in jobs):
        return {}
    try:
        model = site_predict.site_model(site)
    except WrongState:
        return {}
    live = bk.live_jobs(site, jobs)
    snap = from_live(
        live,
        bk.site_seconds(site, bk.now()),
        model.bundle.jobs,
        machine_procs=site.machine_procs,
    )
    starts, _ = queue_starts(model.bundle, snap)
    backend_of = {lj.request.job_id: j.backend_id for lj, j in zip(live, jobs, strict=True)}
    return {
        backend_of[int(i)]: bk.site_datetime(site, float(s))
        for i, s in zip(snap.waiting.requests.job_id, starts, strict=True)
    }


def _job_body(j: BackendJob, *, mine: bool, staff: bool) -> dict[str, Any]:
    def when(ts: float | None) -> dt.datetime | None:
        return None if ts is None else dt.datetime.fromtimestamp(ts, tz=dt.UTC)

    limit = j.time_limit_s if np.isfinite(j.time_limit_s) else None
    return {
        "backend_job_id": j.backend_id,
        "mine": mine,
        "tag": j.tag if mine or staff else "",
        "name": j.name if mine or staff else "",
        "user": j.user if mine or staff else "",
        "procs": j.procs,
        "time_limit_s": limit,
        "state": j.state,
        "backend_state": j.outcome,
        "submitted_at": when(j.submit_ts),
        "started_at": when(j.start_ts),
    }
