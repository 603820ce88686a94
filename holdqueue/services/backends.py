"""A site's backend object, its clock, and its live queue as the predictor's snapshot.

The site clock: seconds since ``Site.epoch`` (history rows and snapshots use it); the
backends speak Unix timestamps.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

import numpy as np
from django.conf import settings
from django.utils import timezone

from holdqueue.core.backends.base import (
    RUNNING,
    Backend,
    BackendJob,
    BackendUnavailable,
)
from holdqueue.core.backends.registry import make_backend
from holdqueue.core.backends.simulated import RUNTIME_FRACTION, SPEED, Background, SimSubmission
from holdqueue.models import SimulatedSubmission, Site
from holdqueue.services.errors import BackendDown
from predictor.core.state.request import JobRequest
from predictor.core.state.snapshot import LiveJob

SLURM_KEYS = (
    "slurm_conf",
    "timeout_s",
    "workdir",
    "submit_as_owner",
    "accounting",
    "export_env",
    "allowed_directives",
)
SIMULATED_KEYS = ("speed", "runtime_fraction")


def max_timeout_s() -> float:
    """A tool's time limit stays under half the submit lease: a submission still in flight
    is never taken for a lost one (``QUEUECAST_SUBMIT_LEASE_S``)."""
    return max(float(getattr(settings, "QUEUECAST_SUBMIT_LEASE_S", 60)) / 2.0, 1.0)


class DatabaseStore:
    """The simulated cluster's submissions, as rows (a SubmissionStore)."""

    def __init__(self, site: Site) -> None:
        self.site = site

    def add(self, submission: SimSubmission) -> SimSubmission:
        row = SimulatedSubmission.objects.create(
            site=self.site, **{f: getattr(submission, f) for f in _COPIED}
        )
        return _sub(row)

    def since(self, ts: float) -> list[SimSubmission]:
        rows = SimulatedSubmission.objects.filter(site=self.site, submit_ts__gte=ts)
        return [_sub(r) for r in rows.order_by("submit_ts", "id")]

    def cancel(self, backend_id: str, ts: float) -> None:
        pk = int(backend_id.lstrip("q"))
        SimulatedSubmission.objects.filter(site=self.site, pk=pk, cancel_ts=None).update(
            cancel_ts=ts
        )


# the fields a submission row and SimSubmission share (the id and cancel time are mapped apart)
_COPIED = ("tag", "name", "user", "procs", "time_limit_s", "runtime_s", "submit_ts")


def _sub(row: SimulatedSubmission) -> SimSubmission:
    return SimSubmission(
        backend_id=f"q{row.pk}",
        cancel_ts=row.cancel_ts,
        **{f: getattr(row, f) for f in _COPIED},
    )


def _trace_stamp(site: Site) -> str:
    """What tells one stored trace from another that got the same id (SQLite reuses the id of
    a deleted last row): its creation time and job count."""
    trace = site.trace
    return f"{trace.created_at.isoformat()}/{trace.job_count}"


@lru_cache(maxsize=8)
def _background(trace_id: int, stamp: str) -> Background:
    """The trace's jobs as background load, cached per (id, :func:`_trace_stamp`)."""
    from traces.services.queries import jobs_frame

    jobs = jobs_frame(trace_id)
    jobs = jobs[(jobs["run_time"] >= 0) & (jobs["submit_time"] >= 0)]
    if jobs.empty:
        raise BackendUnavailable(f"trace {trace_id} has no jobs with a runtime to replay")
    procs = np.where(jobs["allocated_procs"] > 0, jobs["allocated_procs"], jobs["requested_procs"])
    run = jobs["run_time"].to_numpy(float)
    req = jobs["requested_time"].to_numpy(float)
    return Background(
        submit_s=jobs["submit_time"].to_numpy(float),
        runtime_s=run,
        estimate_s=np.where(req > 0, req, np.maximum(run, 1.0)),
        procs=np.maximum(np.asarray(procs, dtype=np.int64), 1),
        user=jobs["user_id"].to_numpy(np.int64),
    )


def backend_for(site: Site) -> Backend:
    """The backend object of ``site`` (cheap to build; build one per call)."""
    config = site.config or {}
    if site.broken:
        raise BackendDown(f"site {site.name} is broken: {site.broken}", site=site.name)
    if site.backend == "slurm":
        options = {k: config[k] for k in SLURM_KEYS if k in config}
        options["timeout_s"] = min(float(options.get("timeout_s", 20.0)), max_timeout_s())
        return make_backend("slurm", partition=site.partition, **options)
    if site.trace_id is None:
        raise BackendDown(f"simulated site {site.name} has no trace to replay", site=site.name)
    options = simulated_options(site)
    return make_backend(
        "simulated",
        background=_background(site.trace_id, _trace_stamp(site)),
        machine_procs=site.machine_procs,
        epoch_ts=site.epoch.timestamp(),
        store=DatabaseStore(site),
        **options,
    )


def simulated_options(site: Site) -> dict[str, float]:
    """A simulated site's ``speed`` and ``runtime_fraction`` as its config gives them (the
    backend's defaults for the others)."""
    config = site.config or {}
    return {k: float(config[k]) for k in SIMULATED_KEYS if k in config}


def simulated_hold_s(site: Site, time_limit_s: float) -> float | None:
    """How long, in wall seconds, a job with this limit holds its processors on a simulated
    site (``runtime_fraction`` of its limit on the site's clock, ``SimulatedBackend.submit``);
    None on a real batch system, where the job runs its command."""
    if site.backend != "simulated":
        return None
    options = simulated_options(site)
    fraction = options.get("runtime_fraction", RUNTIME_FRACTION)
    return max(1.0, fraction * float(time_limit_s)) / options.get("speed", SPEED)


def run_note(site: Site) -> str:
    """What a submitted job does here, in a sentence for the site's pages and API: on a
    simulated site the command is not run and the job holds its processors for a fixed share
    of its time limit (docs/sites.md); "" on a real batch system."""
    if site.backend != "simulated":
        return ""
    options = simulated_options(site)
    speed = options.get("speed", SPEED)
    clock = "" if speed == 1.0 else f" (its clock runs {speed:g} times real time)"
    return (
        "This is a simulated cluster: the command is not run. A job holds its processors "
        f"for {options.get('runtime_fraction', RUNTIME_FRACTION):.0%} of its time limit"
        f"{clock}, then ends."
    )


def site_seconds(site: Site, when: dt.datetime | float) -> float:
    """``when`` (a datetime or a Unix timestamp) in seconds since the site's epoch."""
    ts = when.timestamp() if isinstance(when, dt.datetime) else float(when)
    return ts - site.epoch.timestamp()


def site_datetime(site: Site, seconds: float) -> dt.datetime:
    return site.epoch + dt.timedelta(seconds=float(seconds))


def now() -> dt.datetime:
    return timezone.now()


def active_jobs(site: Site, backend: Backend | None = None) -> list[BackendJob]:
    """The site's waiting and running jobs now, or :class:`BackendDown` with the reason
    (asking ``backend`` when the caller has built it already)."""
    try:
        return (backend or backend_for(site)).active()
    except BackendUnavailable as exc:
        raise BackendDown(f"site {site.name}: {exc}", site=site.name) from exc


def user_number(name: str) -> int:
    """A stable non-negative integer for a user name (SWF user ids are integers)."""
    import zlib

    return zlib.crc32(name.encode()) & 0x7FFFFFFF if name else -1


def live_jobs(site: Site, jobs: list[BackendJob]) -> list[LiveJob]:
    """Backend jobs as the predictor's :class:`LiveJob` (site seconds)."""
    out = []
    numbers = job_numbers([j.backend_id for j in jobs])
    for k, j in enumerate(jobs):
        request = JobRequest(
            user=user_number(j.user),
            procs=max(int(j.procs), 1),
            req_time_s=j.time_limit_s if np.isfinite(j.time_limit_s) else 0.0,
            submit_s=site_seconds(site, j.submit_ts),
            job_id=numbers[k],
        )
        if j.state == RUNNING:
            start = site_seconds(site, j.start_ts) if j.start_ts else None
            out.append(LiveJob(request, "running", start_s=start, elapsed_s=0.0))
        else:
            out.append(LiveJob(request, "waiting"))
    return out


def job_numbers(backend_ids: list[str]) -> list[int]:
    """One distinct job number per backend id: its digits (a Slurm id as it is), or, when
    those are missing or already taken (the simulated site's ``t0-2`` and ``q2``), the next
    number above every id's digits. Queue starts are matched back to jobs by this number."""
    parsed = [_digits(b) for b in backend_ids]
    spare = max((n for n in parsed if n is not None), default=-1) + 1
    out, seen = [], set()
    for n in parsed:
        if n is None or n in seen:
            n, spare = spare, spare + 1
        seen.add(n)
        out.append(n)
    return out


def _digits(backend_id: str) -> int | None:
    digits = "".join(c for c in backend_id if c.isdigit())
    return int(digits[-15:]) if digits else None
