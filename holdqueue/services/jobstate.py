"""Our jobs' state as the batch system reports it (the sweep's sync, by tag).

``submitted`` moves to ``pending`` (waiting in the batch system), ``running`` (with its
start) and ``finished`` (with its end and outcome in ``backend_state``: COMPLETED, FAILED,
TIMEOUT...); a job cancelled outside Queuecast ends ``cancelled``. Moves only go forward.

The same tag seen on a row still in ``submitting`` settles it (the job did reach the batch
system: its id is recorded). The same tag on a second job id is a double submission; the
extra copy is cancelled and the row says so.
"""

from __future__ import annotations

import datetime as dt
import logging

from holdqueue.core.backends.base import FINISHED, RUNNING, BackendJob
from holdqueue.models import Site, SiteJob
from holdqueue.services import backends as bk

log = logging.getLogger(__name__)

S = SiteJob
# The states each target state may be reached from.
BEFORE = {
    S.PENDING: (S.SUBMITTING, S.SUBMITTED),
    S.RUNNING: (S.SUBMITTING, S.SUBMITTED, S.PENDING),
    S.FINISHED: (S.SUBMITTING, S.SUBMITTED, S.PENDING, S.RUNNING),
    S.CANCELLED: (S.SUBMITTING, S.SUBMITTED, S.PENDING, S.RUNNING),
}


def _when(ts: float | None) -> dt.datetime | None:
    return None if ts is None else dt.datetime.fromtimestamp(ts, tz=dt.UTC)


def target_state(j: BackendJob) -> str:
    if j.state == FINISHED:
        return S.CANCELLED if j.outcome.startswith("CANCELLED") else S.FINISHED
    return S.RUNNING if j.state == RUNNING else S.PENDING


def apply(site: Site, jobs: list[BackendJob]) -> list[BackendJob]:
    """Move our rows to what ``jobs`` say; returns the extra copies of a job (same tag, other
    id) for the caller to cancel."""
    tagged: dict[str, list[BackendJob]] = {}
    for j in sorted(jobs, key=_order):
        if j.tag:
            tagged.setdefault(j.tag, []).append(j)
    if not tagged:
        return []
    rows = SiteJob.objects.filter(site=site, tag__in=list(tagged))
    rows = rows.exclude(state__in=(S.HELD, S.FAILED)).only(
        "pk", "tag", "state", "backend_job_id", "started_at", "ended_at", "error"
    )
    extras = []
    for row in rows:
        copies = tagged[row.tag]
        # the job is the id recorded, else the first submitted; any other id is a copy
        ours = next((j for j in copies if j.backend_id == row.backend_job_id), None)
        if ours is None and not row.backend_job_id:
            ours = copies[0]
        extras += [j for j in copies if j is not ours]
        if ours is not None:
            _move(row, ours)
    return extras


def _order(j: BackendJob) -> tuple[int, str]:
    """Slurm ids count up: the smaller one was submitted first."""
    digits = "".join(c for c in j.backend_id if c.isdigit())
    return (int(digits) if digits else 0, j.backend_id)


def _move(row: SiteJob, j: BackendJob) -> None:
    target = target_state(j)
    fields: dict[str, object] = {"backend_state": j.outcome[:40], "in_doubt": False}
    if j.start_ts:
        fields["started_at"] = _when(j.start_ts)
    if j.end_ts and j.state == FINISHED:
        fields["ended_at"] = _when(j.end_ts)
    if row.state == S.SUBMITTING:  # it reached the batch system after all: settle it
        fields.update(backend_job_id=j.backend_id, submitted_at=bk.now(), error="")
    moved = SiteJob.objects.filter(pk=row.pk, state__in=BEFORE[target]).update(
        state=target, updated_at=bk.now(), **fields
    )
    if not moved:  # already in that state: keep its times and the batch system's word
        SiteJob.objects.filter(pk=row.pk, state=target).update(
            **{k: v for k, v in fields.items() if k in ("backend_state", "started_at", "ended_at")}
        )


def note_extra_copy(site: Site, j: BackendJob, cancelled: bool, why: str = "") -> None:
    """Say on the row that a second copy of its job was found (and cancelled or not)."""
    what = "cancelled it" if cancelled else f"could not cancel it ({why})"
    log.error("site %s: second copy of %s (id %s): %s", site.name, j.tag, j.backend_id, what)
    row = SiteJob.objects.filter(site=site, tag=j.tag).first()
    if row is not None and j.backend_id not in row.error:
        note = f"a second copy of this job (id {j.backend_id}) was found by its tag: {what}"
        SiteJob.objects.filter(pk=row.pk).update(error=f"{row.error}\n{note}".strip()[:2000])
