"""Real Celery workers for the tests marked ``worker`` (CI: Redis + PostgreSQL).

A worker is a subprocess on a private queue, so no other worker on the same Redis takes the
message, and it is handed the *test* database's name (pytest-django's ``test_<name>``) so it
sees the rows the (transactional) test commits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import pytest
from django.conf import settings
from django.db import connection

from queuecast.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[1]
REAL_WORKER_MARKS = [
    pytest.mark.worker,
    pytest.mark.skipif(
        os.environ.get("QUEUECAST_WORKER_TESTS") != "1",
        reason="real-worker test: set QUEUECAST_WORKER_TESTS=1 with "
        "CELERY_BROKER_URL=redis://... and DATABASE_URL=postgres://... (CI does)",
    ),
]


def worker_database_url() -> str:
    """DATABASE_URL with the database name pytest-django created for this session."""
    url = urlparse(os.environ["DATABASE_URL"])
    return urlunparse(url._replace(path="/" + connection.settings_dict["NAME"]))


def route_to(queue: str) -> str:
    """Send this process's tasks to ``queue``; returns the queue they went to before.

    With celery 5.6 the Django settings' name (``CELERY_TASK_DEFAULT_QUEUE``) wins over the
    plain one, and the task sender keeps the default queue it was built with: both names
    are set and the cached sender is dropped so the change takes effect.
    """
    previous = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = queue
    celery_app.conf.CELERY_TASK_DEFAULT_QUEUE = queue
    celery_app.amqp.__dict__.pop("send_task_message", None)
    return previous


def require_real_services() -> None:
    if connection.vendor != "postgresql":
        pytest.fail("QUEUECAST_WORKER_TESTS=1 needs DATABASE_URL=postgres://...")
    if not str(settings.CELERY_BROKER_URL).startswith("redis"):
        pytest.fail("QUEUECAST_WORKER_TESTS=1 needs CELERY_BROKER_URL=redis://...")
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.fail("CELERY_TASK_ALWAYS_EAGER is on: the task would not reach the worker")


@contextmanager
def celery_worker(
    tmp_path: Path,
    test_settings,
    pool: str,
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    concurrency: int = 1,
) -> Iterator[Path]:
    """``celery worker -P <pool> -c <concurrency>`` on a private queue; yields its log path.

    Tasks sent meanwhile go to that queue; the worker is terminated (then killed) at the end.
    """
    require_real_services()
    queue = f"queuecast-test-{uuid.uuid4().hex[:8]}"
    default_queue = route_to(queue)
    test_settings.QUEUECAST_UPLOAD_DIR = str(tmp_path / "uploads")
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "QUEUECAST_UPLOAD_DIR": test_settings.QUEUECAST_UPLOAD_DIR,
        "QUEUECAST_CELERY_QUEUE": queue,  # tasks the worker itself sends stay on its queue
        **(env or {}),
    }
    log = tmp_path / "worker.log"
    command = [sys.executable, "-m", "celery", "-A", "queuecast", "worker", "-P", pool,
               "-c", str(concurrency), "-Q", queue, "-n", f"{queue}@%h", "--without-gossip",
               "--without-mingle", "--loglevel=INFO", *extra]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
    try:
        yield log
    finally:
        route_to(default_queue)
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until_over(model, pk: int, timeout_s: float):
    """The row ``pk`` of a long-run ``model`` once ``done`` or ``failed`` (polled every
    0.5 s), or as it is after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        row = model.objects.get(pk=pk)
        if row.status in ("done", "failed"):
            return row
        time.sleep(0.5)
    return model.objects.get(pk=pk)
