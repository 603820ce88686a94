"""One end-to-end ingest through a real Celery worker, Redis and PostgreSQL (CI).

The worker is a subprocess; it must see the rows this test commits, so the test
runs on a transactional database and hands the worker the *test* database's
name (pytest-django's ``test_<name>``), plus its own queue so that no other
worker on the same Redis picks the message up.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import pytest
from django.conf import settings
from django.db import connection

from queuecast.celery import app as celery_app
from tests.service.traces_support import SMALL, SMALL_JOBS, api_for, make_user, post_trace
from traces.models import Job, Trace

pytestmark = [
    pytest.mark.worker,
    pytest.mark.skipif(
        os.environ.get("QUEUECAST_WORKER_TESTS") != "1",
        reason="real-worker test: set QUEUECAST_WORKER_TESTS=1 with "
        "CELERY_BROKER_URL=redis://... and DATABASE_URL=postgres://... (CI does)",
    ),
]
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 90


def worker_database_url() -> str:
    """DATABASE_URL with the database name pytest-django created for this session."""
    url = urlparse(os.environ["DATABASE_URL"])
    return urlunparse(url._replace(path="/" + connection.settings_dict["NAME"]))


def require_real_services() -> None:
    if connection.vendor != "postgresql":
        pytest.fail("QUEUECAST_WORKER_TESTS=1 needs DATABASE_URL=postgres://...")
    if not str(settings.CELERY_BROKER_URL).startswith("redis"):
        pytest.fail("QUEUECAST_WORKER_TESTS=1 needs CELERY_BROKER_URL=redis://...")
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.fail("CELERY_TASK_ALWAYS_EAGER is on: the task would not reach the worker")


@pytest.fixture
def worker(tmp_path, settings):
    """A ``celery worker -P solo`` subprocess on a private queue; yields its log path."""
    require_real_services()
    queue = f"queuecast-test-{uuid.uuid4().hex[:8]}"
    default_queue = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = queue
    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path / "uploads")
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "QUEUECAST_UPLOAD_DIR": settings.QUEUECAST_UPLOAD_DIR,
    }
    log = tmp_path / "worker.log"
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "queuecast",
        "worker",
        "-P",
        "solo",
        "-c",
        "1",
        "-Q",
        queue,
        "-n",
        f"{queue}@%h",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "--loglevel=INFO",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
    try:
        yield log
    finally:
        celery_app.conf.task_default_queue = default_queue
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until_finished(trace_id: int) -> Trace:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        trace = Trace.objects.get(pk=trace_id)
        if trace.status in ("done", "failed"):
            return trace
        time.sleep(0.5)
    return Trace.objects.get(pk=trace_id)


@pytest.mark.django_db(transaction=True)
def test_real_worker_ingests_an_upload_end_to_end(worker) -> None:
    response = post_trace(api_for(make_user("alice")), SMALL, name="via-worker")
    assert response.status_code == 202
    trace = wait_until_finished(response.data["id"])
    log = worker.read_text(errors="replace")
    log_tail = log[-3000:]
    assert trace.status == "done", (
        f"trace is {trace.status} ({trace.error}); worker log:\n{log_tail}"
    )
    assert trace.job_count == SMALL_JOBS == Job.objects.filter(trace=trace).count()
    assert "traces.tasks.ingest_trace" in log, f"the worker did not run the task:\n{log_tail}"
