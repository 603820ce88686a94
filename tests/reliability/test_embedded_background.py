"""Embedded mode: a long run answers 202 at once and runs in a background process of its
own (``queuecast/background.py``); a process that dies leaves the row failed, not pending."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from queuecast import background
from queuecast.longrun import Status
from tests.service.traces_support import SMALL, SMALL_JOBS, make_user
from traces.models import Trace

ROOT = Path(__file__).resolve().parents[2]

# Runs in a fresh process with a file database (another process must see it), as served.
SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    import django
    django.setup()
    from django.core.management import call_command
    call_command("migrate", verbosity=0, interactive=False)
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_user("alice"))
    t0 = time.monotonic()
    with open(sys.argv[1], "rb") as handle:
        response = client.post("/api/traces/", {"file": handle, "name": "bg"}, format="multipart")
    answered_s = time.monotonic() - t0
    url = response["Location"]
    statuses = [response.json()["status"]]
    while statuses[-1] in ("pending", "running") and time.monotonic() - t0 < 240:
        statuses.append(client.get(url).json()["status"])
        time.sleep(0.2)
    body = client.get(url).json()
    print(json.dumps({"code": response.status_code, "answered_s": answered_s,
                      "statuses": statuses, "jobs": body.get("job_count")}))
    """
)


def test_an_upload_answers_202_at_once_and_its_run_ends_done_in_the_background(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "queuecast.settings",
        "QUEUECAST_SQLITE_PATH": str(tmp_path / "db.sqlite3"),
        "QUEUECAST_UPLOAD_DIR": str(tmp_path / "uploads"),
        "QUEUECAST_CACHE_DIR": str(tmp_path / "cache"),
        "QUEUECAST_EMBEDDED_RUNS": "process",
        "QUEUECAST_ALLOWED_HOSTS": "testserver",
    }
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(SMALL)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] == 202
    # Answered before the run ended, and truly so: the row was still unfinished when read
    # back after the answer (inline, the run would be done by then, the body stale).
    assert result["statuses"][0] in ("pending", "running")
    assert result["statuses"][1] in ("pending", "running"), result
    assert result["statuses"][-1] == "done" and result["jobs"] == SMALL_JOBS, result


@pytest.mark.django_db
def test_a_background_process_that_dies_leaves_its_run_failed_with_the_exit_code() -> None:
    trace = Trace.objects.create(name="t", owner=make_user("alice"), status=Status.PENDING)
    killed = subprocess.Popen(
        [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]
    )
    background.watch(killed, Trace, trace.pk)
    trace.refresh_from_db()
    assert trace.status == "failed" and "exit code -9" in trace.error


@pytest.mark.django_db
def test_a_finished_run_is_left_as_it_is_by_the_watcher() -> None:
    trace = Trace.objects.create(name="t", owner=make_user("alice"), status=Status.DONE)
    background.watch(subprocess.Popen([sys.executable, "-c", "pass"]), Trace, trace.pk)
    trace.refresh_from_db()
    assert trace.status == "done" and trace.error == ""


def test_runs_stay_inline_on_a_database_no_other_process_can_see(settings, monkeypatch) -> None:
    from django.db import connection

    settings.QUEUECAST_EMBEDDED_RUNS = "process"
    if connection.vendor != "sqlite":  # CI's PostgreSQL: look like the in-memory SQLite
        monkeypatch.setattr(connection, "vendor", "sqlite")
        monkeypatch.setattr(connection, "is_in_memory_db", lambda: True, raising=False)
    assert background.available() is False  # the test suite's in-memory SQLite


def test_a_run_waits_for_a_free_slot_in_a_small_process_then_becomes_the_run(tmp_path):
    from queuecast import slot_wait

    held = slot_wait.take_slot(str(tmp_path), 1)  # the one slot is taken
    out = tmp_path / "ran"
    command = [sys.executable, str(background.SLOT_WAIT), str(tmp_path), "1", "--",
               sys.executable, "-c", f"open({str(out)!r}, 'w').write('ran')"]  # fmt: skip
    waiting = subprocess.Popen(command)
    with pytest.raises(subprocess.TimeoutExpired):
        waiting.wait(timeout=3)  # queued behind the slot: nothing ran
    assert not out.exists()
    os.close(held)
    assert waiting.wait(timeout=60) == 0 and out.read_text() == "ran"


@pytest.mark.django_db(transaction=True)  # real commits: the process starts inside the request
def test_a_process_that_cannot_start_is_a_503_and_frees_the_name(monkeypatch, settings, tmp_path):
    from tests.service.traces_support import api_for, post_trace

    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path)

    def cannot_fork(*args, **kwargs):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(background, "available", lambda: True)
    monkeypatch.setattr(background.subprocess, "Popen", cannot_fork)
    response = post_trace(api_for(make_user("alice")), SMALL, name="wanted")
    assert response.status_code == 503 and "Resource temporarily" in response.json()["detail"]
    assert not Trace.objects.exists() and not any(tmp_path.glob("trace-*"))


def test_waiting_runs_take_the_slot_in_the_order_they_arrived(tmp_path):
    from queuecast import slot_wait

    held = slot_wait.take_slot(str(tmp_path), 1)
    log = tmp_path / "order"
    waiters = []
    for name in "ABCD":
        command = [sys.executable, str(background.SLOT_WAIT), str(tmp_path), "1", "--",
                   sys.executable, "-c", f"open({str(log)!r}, 'a').write({name!r})"]  # fmt: skip
        waiters.append(subprocess.Popen(command))
        # each has left its ticket before the next starts
        deadline = 50
        while len(os.listdir(tmp_path / "queue")) < len(waiters) and deadline:
            subprocess.run(["sleep", "0.1"], check=True)
            deadline -= 1
    os.close(held)
    assert [w.wait(timeout=60) for w in waiters] == [0, 0, 0, 0]
    assert log.read_text() == "ABCD"


def test_a_dead_waiters_ticket_does_not_block_the_line(tmp_path):
    from queuecast import slot_wait

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / "queue").mkdir()
    (tmp_path / "queue" / f"{1:020d}-{gone.pid}").touch()  # older than any new ticket
    fd = slot_wait.take_slot(str(tmp_path), 1)
    os.close(fd)
    assert os.listdir(tmp_path / "queue") == []


@pytest.mark.django_db
def test_a_pending_run_whose_waiting_process_died_is_failed_by_the_reaper() -> None:
    from queuecast.heartbeat import worker_id
    from queuecast.models import RunLease
    from queuecast.reaper import reap

    owner = make_user("alice")
    dead_proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    dead, alive = (Trace.objects.create(name=n, owner=owner) for n in ("dead", "alive"))
    background.mark_waiting(Trace, dead.pk, dead_proc.pid)
    background.mark_waiting(Trace, alive.pk, os.getpid())
    orphan = Trace.objects.create(name="no-lease", owner=owner)  # a broker's: it redelivers
    assert RunLease.objects.get(run_id=dead.pk).worker == worker_id(dead_proc.pid)
    assert reap() == []  # both waiting processes are alive
    dead_proc.kill()
    dead_proc.wait()
    assert len(reap()) == 1
    statuses = dict(Trace.objects.values_list("name", "status"))
    assert statuses == {"dead": "failed", "alive": "pending", "no-lease": "pending"}
    assert "ended before the run started" in Trace.objects.get(pk=dead.pk).error
    assert orphan.status == Status.PENDING and not RunLease.objects.filter(run_id=dead.pk)


@pytest.mark.django_db
def test_a_run_that_claimed_itself_keeps_its_own_lease() -> None:
    from queuecast.longrun import claim
    from queuecast.models import RunLease

    trace = Trace.objects.create(name="quick", owner=make_user("alice"))
    held = claim(Trace, trace.pk)  # the process claimed before the web process marked it
    assert held is not None
    background.mark_waiting(Trace, trace.pk, 1)
    assert RunLease.objects.get(run_id=trace.pk).token == held.token
    held.finish()
