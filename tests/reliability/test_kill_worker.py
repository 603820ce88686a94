"""A real worker process SIGKILLed mid-ingest and mid-evaluation: the row ends done or
failed, never running.

Embedded mode (no broker): each "worker" is a subprocess running the task body against a
SQLite *file*; the test kills it with SIGKILL while its row is ``running``, then plays
what happens next: the redelivered message (broker mode, ``reject_on_worker_lost``) runs
the ingest again to ``done``; with no redelivery the reaper fails the evaluation, at once
since the dead process was on this host.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
N_JOBS = 80_000  # enough work that the kill lands mid-run (polled every 20 ms)
INGEST = "from traces.tasks import ingest_trace\ningest_trace.delay(1)"  # the task, sent once


def django_code(body: str) -> str:
    return (
        "import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'queuecast.settings'; "
        "django.setup()\n" + body
    )


@pytest.fixture
def site(tmp_path):
    """A migrated SQLite file, a user, and a pending trace whose upload is a big SWF file."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(
        QUEUECAST_SQLITE_PATH=str(tmp_path / "db.sqlite3"),
        QUEUECAST_SECRET_KEY_FILE=str(tmp_path / "key"),
        QUEUECAST_UPLOAD_DIR=str(tmp_path / "uploads"),
    )
    upload = tmp_path / "big.swf"
    rows = (
        f"{n} {n * 7} {n % 600} {60 + n % 3600} {1 + n % 32} -1 -1 {1 + n % 32} 7200 -1 1 "
        f"{n % 50} 1 -1 1 -1 -1 -1"
        for n in range(1, N_JOBS + 1)
    )
    upload.write_text("; Version: 2.2\n; MaxProcs: 128\n" + "\n".join(rows) + "\n")
    setup = django_code(
        "from django.core.management import call_command; call_command('migrate', verbosity=0)\n"
        "from django.contrib.auth.models import User\n"
        "from traces.models import Trace\n"
        "u = User.objects.create_user('alice')\n"
        f"Trace.objects.create(name='big', owner=u, upload_path={str(upload)!r})\n"
    )
    run(setup, env)
    return env, tmp_path / "db.sqlite3"


def run(code: str, env: dict, timeout: float = 240) -> str:
    done = subprocess.run(
        [sys.executable, "-c", django_code(code) if "django.setup" not in code else code],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def row(db: Path, table: str, pk: int = 1) -> tuple[str, float]:
    with sqlite3.connect(db, timeout=30) as conn:
        found = conn.execute(f"SELECT status, progress FROM {table} WHERE id = ?", (pk,)).fetchone()
    return found or ("gone", 0.0)


def kill_while_running(code: str, env: dict, db: Path, table: str, min_progress: float) -> None:
    """Start a worker on ``code``, SIGKILL it once its row is running past ``min_progress``."""
    worker = subprocess.Popen(
        [sys.executable, "-c", django_code(code)], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            status, progress = row(db, table)
            if status == "running" and progress >= min_progress:
                break
            assert worker.poll() is None, f"the worker ended before the kill ({status})"
            time.sleep(0.02)
        else:
            pytest.fail("the run never started")
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(10)
        assert worker.returncode == -signal.SIGKILL
        assert row(db, table)[0] == "running"  # what the kill leaves behind
    finally:
        if worker.poll() is None:
            worker.kill()


def test_sigkill_mid_ingest_then_redelivery_ingests_the_trace_whole(site) -> None:
    env, db = site
    kill_while_running(INGEST, env, db, "traces_trace", 0.05)
    assert run(
        "from traces.tasks import ingest_trace\nprint(ingest_trace.delay(1).get())", env
    ) == ("done")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM traces_job").fetchone()[0] == N_JOBS
        assert conn.execute("SELECT COUNT(*) FROM queuecast_runlease").fetchone()[0] == 0


def test_sigkill_mid_ingest_without_redelivery_is_reaped_as_failed(site) -> None:
    env, db = site
    kill_while_running(INGEST, env, db, "traces_trace", 0.05)
    out = run("from queuecast.reaper import reap\nprint(len(reap()))", env)
    assert out == "1"
    with sqlite3.connect(db) as conn:
        status, error = conn.execute("SELECT status, error FROM traces_trace").fetchone()
        assert conn.execute("SELECT COUNT(*) FROM traces_job").fetchone()[0] == 0
    assert status == "failed" and "process is gone" in error


def test_sigkill_mid_evaluation_is_reaped_as_failed(site) -> None:
    env, db = site
    run("from traces.tasks import ingest_trace\nprint(ingest_trace.delay(1).get())", env)
    run(
        "from predictor.models import EvaluationRun\n"
        "from traces.models import Trace\n"
        "t = Trace.objects.get()\n"
        "EvaluationRun.objects.create(kind='wait', owner=t.owner, trace=t, methods=['apq'])\n",
        env,
    )
    kill_while_running(
        "from predictor.tasks.evaluations import run_evaluation\nrun_evaluation.delay(1)",
        env, db, "predictor_evaluationrun", 0.0,
    )  # fmt: skip
    assert run("from queuecast.reaper import reap\nprint(len(reap()))", env) == "1"
    with sqlite3.connect(db) as conn:
        status, error = conn.execute("SELECT status, error FROM predictor_evaluationrun").fetchone()
    assert status == "failed" and "worker" in error and "process is gone" in error
