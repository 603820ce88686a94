"""A site's finished-job history: stored rows, SWF frames for the predictor, and sync from
the batch system (what it reports as finished is upserted by backend id, so a sync repeated
over the same window changes nothing)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import numpy as np
import pandas as pd
from django.db import transaction
from django.db.models import Max

from holdqueue.core.backends.base import BackendJob
from holdqueue.models import SiteHistory
from holdqueue.services import jobstate
from holdqueue.services.backends import site_seconds, user_number
from predictor.core.lru import LRU
from traces.core.swf import INT_FIELDS, SWF_FIELDS

SYNC_OVERLAP_S = 300.0  # re-read a little before the last sync: accounting lags the controller
SLURM_STATUS = {"COMPLETED": 1, "FAILED": 0, "TIMEOUT": 0, "NODE_FAIL": 0, "CANCELLED": 5}


FRAMES_KEPT = 16  # sites whose history frame a process keeps
_FRAMES: LRU[tuple[tuple, pd.DataFrame]] = LRU(size=FRAMES_KEPT)


def history_frame(site) -> pd.DataFrame:
    """The site's finished jobs with the SWF columns, by submit time (the predictor's input).

    Read once per state of the history and kept (a copy is returned): history rows are only
    ever added (``record_finished`` skips known keys, imports and the warm-up insert), so the
    largest row id says whether it changed. A live prediction used to read
    every row (28,476 for a site replaying KTH) at every request; now it costs one aggregate
    query while no job has finished (issue 18)."""
    return history_reader(site)()


def history_reader(site) -> Callable[[], pd.DataFrame]:
    """:func:`history_frame` as the history is now, copied when called: a snapshot whose
    history is never read (a prediction without molding candidates) does not pay for the
    copy, 5 CPU-ms a request for a site holding HPC2N's 202,871 jobs."""
    stamp = _stamp(site)
    held = _FRAMES.get(site.pk)
    if held is None or held[0] != stamp:
        held = _FRAMES.put(site.pk, (stamp, _read_frame(site)))
    return held[1].copy


def _stamp(site) -> tuple:
    """(creation time, largest row id) of the site's history. Rows are only ever added, and an
    added row gets a larger id than every row before it, so the largest id alone tells a new
    state; it is read from the index in one step, where counting the rows read all of them
    (4-7 ms per request for a site replaying KTH, issue 18)."""
    got = SiteHistory.objects.filter(site=site).aggregate(top=Max("id"))
    created = site.created_at.timestamp() if site.created_at else None
    return created, got["top"]


def _read_frame(site) -> pd.DataFrame:
    """Every history row as the SWF frame (:func:`history_frame`)."""
    rows = list(
        SiteHistory.objects.filter(site=site)
        .order_by("submit_s", "id")
        .values_list("submit_s", "wait_s", "run_s", "procs", "req_time_s", "status", "user")
    )
    n = len(rows)
    cols = {f: np.full(n, -1, dtype=np.int64) for f in SWF_FIELDS}
    if n:
        submit, wait, run, procs, req, status, users = (
            np.array(c) for c in zip(*rows, strict=True)
        )
        submit = submit.astype(float)
        # -1 is SWF's "missing": a job submitted exactly 1 s before the epoch moves by 1 us
        submit[submit == -1.0] = np.nextafter(-1.0, -np.inf)
        cols.update(
            job_id=np.arange(1, n + 1),
            submit_time=submit,
            wait_time=wait.astype(float),
            run_time=run.astype(float),
            allocated_procs=procs.astype(np.int64),
            requested_procs=procs.astype(np.int64),
            requested_time=req.astype(float),
            status=status.astype(np.int64),
            user_id=np.array([user_number(u) for u in users.tolist()], dtype=np.int64),
            queue_id=np.zeros(n, dtype=np.int64),
        )
    frame = pd.DataFrame(cols)[list(SWF_FIELDS)]
    for f in SWF_FIELDS:
        if f not in INT_FIELDS:
            frame[f] = frame[f].astype(float)
    # One block per dtype (``copy`` consolidates): the kept frame is copied at every request,
    # and a copy of 18 single-column blocks consolidated them again each time (~7 CPU-ms).
    return frame.copy()


def history_rows(site, jobs: list[BackendJob]) -> list[SiteHistory]:
    out = []
    for j in jobs:
        if j.start_ts is None or j.end_ts is None:
            continue  # cancelled while waiting: it never ran, nothing to learn
        submit = site_seconds(site, j.submit_ts)
        out.append(
            SiteHistory(
                site=site,
                job_key=j.backend_id,
                user=j.user[:100],
                submit_s=submit,
                wait_s=max(j.start_ts - j.submit_ts, 0.0),
                run_s=max(j.end_ts - j.start_ts, 0.0),
                procs=j.procs,
                req_time_s=j.time_limit_s if np.isfinite(j.time_limit_s) else -1.0,
                status=SLURM_STATUS.get(j.outcome.split(" ")[0], 1),
            )
        )
    return out


def record_finished(site, finished: list[BackendJob], until: dt.datetime) -> int:
    """Upsert finished jobs into the history, move our jobs to finished; rows added."""
    return record_finished_and_extras(site, finished, until)[0]


def record_finished_and_extras(
    site,
    finished: list[BackendJob],
    until: dt.datetime,
) -> tuple[int, list[BackendJob]]:
    """:func:`record_finished`, plus the extra copies of our jobs seen among them."""
    rows = history_rows(site, finished)
    with transaction.atomic():
        known = set(
            SiteHistory.objects.filter(
                site=site, job_key__in=[r.job_key for r in rows]
            ).values_list("job_key", flat=True)
        )
        fresh = [r for r in rows if r.job_key not in known]
        SiteHistory.objects.bulk_create(fresh)
        extras = jobstate.apply(site, finished)
        type(site).objects.filter(pk=site.pk).update(synced_until=until)
    return len(fresh), extras


def record_active(site, active: list[BackendJob]) -> list[BackendJob]:
    """Our jobs' live states (pending, running) as the backend reports them; returns the
    extra copies of a job (same tag, another id)."""
    return jobstate.apply(site, active)


def sync_since(site) -> float:
    """Unix time to ask the backend for finished jobs from."""
    base = site.synced_until or site.epoch
    return base.timestamp() - SYNC_OVERLAP_S
