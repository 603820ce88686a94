"""Embedded mode's long runs: each in its own background process, so a request answers at once.

Without a broker (``CELERY_TASK_ALWAYS_EAGER``) a task used to run inside the request that
created it: a molding run answered "202 Accepted" after 40 s with a stale body. Now, when
the transaction commits, :func:`spawn` starts ``manage.py run_task <task> <id>`` in a new
session (it outlives a recycled gunicorn worker) and returns; the request answers 202 with
the row as it truly is (``pending``, or ``running`` once the process claimed it).

The process runs the same task body as a Celery worker would (``queuecast.longrun.execute``:
claim, lease heartbeat, memory and time ceilings, done or failed). A crash is seen twice:
a daemon thread of the web process waits for the child and fails a row it left unfinished
with the exit code, and the reaper fails a running row whose process is gone even if the
web process went first. A run still waiting ``pending`` for its slot carries a lease naming
its process from the start (:func:`mark_waiting`), so the reaper fails it too if that process
dies before it starts while the web process is also gone.

At most ``QUEUECAST_EMBEDDED_MAX_RUNS`` run at once: the others wait ``pending`` in
``queuecast/slot_wait.py`` (a small interpreter without Django) until a ``flock``-ed slot
file is free, then become the run; they take the slots in the order they were spawned.

``QUEUECAST_EMBEDDED_RUNS=inline`` keeps the old in-request behaviour; an in-memory SQLite
database (the test suite's) cannot be reached by another process, so it is inline too.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction

from queuecast.heartbeat import worker_id
from queuecast.models import RunLease

logger = logging.getLogger(__name__)
MANAGE = Path(settings.BASE_DIR) / "manage.py"
SLOT_WAIT = Path(__file__).with_name("slot_wait.py")  # run as a file: no Django while waiting
UNFINISHED = ("pending", "running")


def available() -> bool:
    """Runs go to a background process: embedded mode, a database other processes see, and
    the row committed (not inside an outer transaction, as in a test case)."""
    if not settings.CELERY_TASK_ALWAYS_EAGER or settings.QUEUECAST_EMBEDDED_RUNS != "process":
        return False
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        return False
    return not connection.in_atomic_block


def same_database_env() -> dict[str, str]:
    """This process's environment for a child ``manage.py``, naming the database this
    process uses (a test run's differs from the settings' name)."""
    return {**os.environ, "QUEUECAST_DATABASE_NAME": str(connection.settings_dict["NAME"])}


def spawn(model: Any, pk: int, task_name: str) -> subprocess.Popen:
    """Start ``run_task`` for ``pk`` (behind a run slot) and a thread that fails the row if
    the process dies."""
    slots = Path(settings.QUEUECAST_CACHE_DIR) / "run-slots"
    command = [
        sys.executable, str(SLOT_WAIT), str(slots), str(settings.QUEUECAST_EMBEDDED_MAX_RUNS),
        "--", sys.executable, str(MANAGE), "run_task", task_name, str(pk),
    ]  # fmt: skip
    env = same_database_env()
    proc = subprocess.Popen(
        command, cwd=str(MANAGE.parent), env=env, stdin=subprocess.DEVNULL, start_new_session=True
    )
    logger.info("%s #%s: running in background process %s", model._meta.label_lower, pk, proc.pid)
    mark_waiting(model, pk, proc.pid)
    watcher = threading.Thread(target=watch, args=(proc, model, pk), name=f"run-{pk}", daemon=True)
    with _LOCK:
        _WATCHERS.add(watcher)
    watcher.start()
    return proc


_LOCK = threading.Lock()
_WATCHERS: set[threading.Thread] = set()  # this process's runs not yet ended and recorded


def wait_for_runs(timeout_s: float) -> bool:
    """Wait until every run this process spawned has ended and its watcher has recorded it
    (at most ``timeout_s`` in all); False if some had not. A test that starts a run through
    a page calls it before its database goes away (else the run's process and watcher read
    a dropped database)."""
    with _LOCK:
        watchers = list(_WATCHERS)
    deadline = time.monotonic() + timeout_s
    for watcher in watchers:
        watcher.join(max(deadline - time.monotonic(), 0.0))
    return not any(w.is_alive() for w in watchers)


def mark_waiting(model: Any, pk: int, pid: int) -> None:
    """Name ``pid`` as the owner of the still-pending row, so its death is seen (reaper).

    The run's ``claim`` replaces this lease with its own; if it already did, keep that one.
    """
    label = model._meta.label_lower
    if not model.objects.filter(pk=pk, status="pending").exists():
        return
    try:
        with transaction.atomic():
            RunLease.objects.get_or_create(
                run_label=label,
                run_id=pk,
                defaults={"token": uuid.uuid4().hex, "worker": worker_id(pid)},
            )
    except IntegrityError:  # the run claimed itself between the lookup and the insert
        pass


def watch(proc: subprocess.Popen, model: Any, pk: int) -> None:
    """Wait for the run's process; a row it left pending or running is failed with the code."""
    code = proc.wait()
    label = model._meta.label_lower
    try:
        status = model.objects.filter(pk=pk).values_list("status", flat=True).first()
        if status in UNFINISHED:
            model.fail(pk, f"the background process of this run ended with exit code {code}")
            logger.error("%s #%s: background process exit %s", label, pk, code)
    except Exception:  # the database went away first: the reaper fails the row by its lease
        logger.warning("%s #%s: exit %s not recorded", label, pk, code, exc_info=True)
    finally:
        if threading.current_thread() is not threading.main_thread():
            connection.close()
        with _LOCK:
            _WATCHERS.discard(threading.current_thread())
