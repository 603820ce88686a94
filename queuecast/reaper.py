"""The reaper: fail ``running`` rows whose worker is gone, for every kind of run.

It runs (a) from a middleware at most every ``QUEUECAST_REAP_INTERVAL_S`` per web
process, so the embedded mode needs no extra process, and (b) as a Celery beat task in
broker mode (``celery -A queuecast worker -B``), and (c) on demand:
``manage.py reap_runs``. A row is reaped when its lease's heartbeat is older than
``QUEUECAST_RUN_STALE_S``, at once when its worker process on this host is gone, or when
it has no lease and started longer than ``QUEUECAST_RUN_STALE_S`` ago. A ``pending`` row
whose lease names a process on this host that is gone (an embedded run that died waiting
for its slot, ``queuecast/background.py``) is failed too; a pending row without a lease
waits for its broker, which redelivers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from queuecast.heartbeat import lease_dead_reason, process_gone, stale_before
from queuecast.longrun import ERROR_CHARS, LongRun, Status
from queuecast.models import RunLease

logger = logging.getLogger(__name__)


def run_models() -> list[type[LongRun]]:
    """Every concrete model built on :class:`LongRun` (new kinds are found by themselves)."""
    return [m for m in apps.get_models() if issubclass(m, LongRun)]


def reap(now: datetime | None = None) -> list[str]:
    """Fail the dead runs; returns one line per reaped row."""
    now = now or timezone.now()
    reaped: list[str] = []
    for model in run_models():
        try:
            with transaction.atomic():  # one kind's table missing must not stop the others
                reaped.extend(_reap_model(model, now))
        except DatabaseError as exc:
            logger.warning("reaper skipped %s: %s", model._meta.label_lower, exc)
    for line in reaped:
        logger.warning("reaped %s", line)
    return reaped


def _reap_model(model: type[LongRun], now: datetime) -> list[str]:
    return _reap_running(model, now) + _reap_waiting(model, now)


def _reap_waiting(model: type[LongRun], now: datetime) -> list[str]:
    """Pending rows whose waiting process is gone (only embedded runs have such a lease)."""
    label = model._meta.label_lower
    pending = model.objects.filter(status=Status.PENDING).values_list("pk", flat=True)
    reaped = []
    for lease in RunLease.objects.filter(run_label=label, run_id__in=list(pending)):
        if process_gone(lease.worker):
            reason = f"worker {lease.worker} lost: its process ended before the run started"
            if _fail_dead(model, lease.run_id, lease, reason, now, Status.PENDING):
                reaped.append(f"{label} #{lease.run_id}: {reason}")
    return reaped


def _reap_running(model: type[LongRun], now: datetime) -> list[str]:
    running = dict(model.objects.filter(status=Status.RUNNING).values_list("pk", "started_at"))
    if not running:
        return []
    label = model._meta.label_lower
    leases = {
        lease.run_id: lease
        for lease in RunLease.objects.filter(run_label=label, run_id__in=list(running))
    }
    reaped = []
    for pk, started_at in running.items():
        reason = _dead_reason(leases.get(pk), started_at, now)
        if reason and _fail_dead(model, pk, leases.get(pk), reason, now):
            reaped.append(f"{label} #{pk}: {reason}")
    return reaped


def _dead_reason(lease: RunLease | None, started_at: datetime | None, now: datetime) -> str | None:
    if lease is not None:
        return lease_dead_reason(lease.worker, lease.heartbeat_at, now)
    if started_at is None or started_at < stale_before(now):
        return "worker lost: the run has no lease (its worker died before recording one)"
    return None


def _fail_dead(
    model: type[LongRun],
    pk: int,
    lease: RunLease | None,
    reason: str,
    now: datetime,
    status: str = Status.RUNNING,
) -> bool:
    with transaction.atomic():
        if lease is not None and not RunLease.objects.filter(token=lease.token).delete()[0]:
            return False  # taken over by a redelivered task meanwhile
        return bool(
            model.objects.filter(pk=pk, status=status).update(
                status=Status.FAILED, error=reason[:ERROR_CHARS], finished_at=now
            )
        )


_last_reap = [0.0]
_reap_lock = threading.Lock()


def maybe_reap() -> None:
    """Reap if this process has not in the last ``QUEUECAST_REAP_INTERVAL_S`` seconds."""
    interval = float(settings.QUEUECAST_REAP_INTERVAL_S)
    if time.monotonic() - _last_reap[0] < interval or not _reap_lock.acquire(blocking=False):
        return
    try:
        _last_reap[0] = time.monotonic()
        reap()
    except Exception:  # the request must not fail because the reaper could not run
        logger.warning("reaper failed", exc_info=True)
    finally:
        _reap_lock.release()


class ReaperMiddleware:
    """Runs :func:`maybe_reap` before a request, so what a user reads is never stale."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        maybe_reap()
        return self.get_response(request)
