"""A Redis restart under a worker holding due held jobs: the worker and its beat live on, and
every job is released once, on time, with no manual step.

The test runs its own ``redis-server`` (``QUEUECAST_TEST_REDIS_PORT``, default 6390; no
persistence, so the restart loses every queued message, the harshest case) and one
``celery worker -B`` on it, with prefork processes as in docker-compose.yml and the sweep
every second. Jobs come due before, during and after the outage. With celery 5.7.0 the
worker died at the restart (kombu's ``restore_unacked_once``: ``AttributeError: 'NoneType'
object has no attribute 'hostname'``) and no job was ever released; see pyproject.toml.

Bound: a job is submitted within ``BOUND_S`` of its release time, or for a job due during or
after the outage, of the later of that and the moment Redis answers again (reconnection
back-off + sweep period 1 s + the submission).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.utils import timezone

from holdqueue.models import SimulatedSubmission, SiteJob
from tests.service.test_sites_support import make_user, simulated_site
from tests.worker_support import REAL_WORKER_MARKS, require_real_services, worker_database_url

pytestmark = REAL_WORKER_MARKS
ROOT = Path(__file__).resolve().parents[2]
PORT = int(os.environ.get("QUEUECAST_TEST_REDIS_PORT", "6390"))
BOUND_S = 8.0
READY_TIMEOUT_S = 120


class Redis:
    """A private ``redis-server`` on 127.0.0.1:PORT that can be stopped and started again."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.process = folder, None

    def start(self) -> dt.datetime:
        command = ["redis-server", "--port", str(PORT), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no", "--dir", str(self.folder)]  # fmt: skip
        log = (self.folder / "redis.log").open("ab")
        self.process = subprocess.Popen(command, stdout=log, stderr=log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ping = subprocess.run(["redis-cli", "-p", str(PORT), "ping"], capture_output=True)
            if ping.stdout.strip() == b"PONG":
                return timezone.now()
            assert self.process.poll() is None, (self.folder / "redis.log").read_text()
            time.sleep(0.1)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


class Worker:
    """``celery worker -B`` (prefork, 2 processes) on the private Redis and a private queue."""

    def __init__(self, tmp_path: Path) -> None:
        self.log = tmp_path / "worker.log"
        queue = f"queuecast-test-{uuid.uuid4().hex[:8]}"
        env = {
            **os.environ,
            "DATABASE_URL": worker_database_url(),
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{PORT}/0",
            "QUEUECAST_CELERY_QUEUE": queue,
            "QUEUECAST_HOLD_SWEEP_S": "1",
            "QUEUECAST_SITE_SYNC_S": "3600",
        }
        env.pop("CELERY_RESULT_BACKEND", None)
        command = [sys.executable, "-m", "celery", "-A", "queuecast", "worker", "-P", "prefork",
                   "-c", "2", "-Q", queue, "-n", f"{queue}@%h", "--without-gossip",
                   "--without-mingle", "-B", "-s", str(tmp_path / "beat"),
                   "--loglevel=INFO"]  # fmt: skip
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=out, stderr=out, start_new_session=True
            )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if "ready." in self.text():
                return
            assert self.process.poll() is None, self.text()[-3000:]
            time.sleep(0.2)
        raise AssertionError(f"worker not ready:\n{self.text()[-3000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait()


def hold(site, owner, at: dt.datetime) -> SiteJob:
    return SiteJob.objects.create(
        site=site, owner=owner, name="r", script="#!/bin/sh\nsleep 1\n", procs_requested=2,
        procs_chosen=2, time_limit_s=60, state=SiteJob.HELD, arrived_at=timezone.now(),
        release_at=at,
    )  # fmt: skip


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
@pytest.mark.django_db(transaction=True)
def test_a_redis_restart_loses_no_release_and_the_worker_lives_on(tmp_path) -> None:
    require_real_services()
    site = simulated_site()
    owner = make_user("alice")
    redis = Redis(tmp_path)
    redis.start()
    worker = Worker(tmp_path)
    try:
        worker.wait_ready()
        now = timezone.now()
        # due before the outage, during it (Redis down 4 s from +12 s), and after it
        jobs = [hold(site, owner, now + dt.timedelta(seconds=s)) for s in (6, 13, 25, 26)]
        deadline = time.monotonic() + 60
        while SiteJob.objects.get(pk=jobs[0].pk).state == "held":
            assert time.monotonic() < deadline, worker.text()[-3000:]
            time.sleep(0.2)
        time.sleep(max((now + dt.timedelta(seconds=12) - timezone.now()).total_seconds(), 0))
        down = timezone.now()
        redis.stop()
        time.sleep(4)
        back = redis.start()
        assert timezone.now() < jobs[2].release_at, "the machine is too slow for the margins"
        deadline = time.monotonic() + 90
        while any(SiteJob.objects.get(pk=j.pk).state in ("held", "submitting") for j in jobs):
            assert time.monotonic() < deadline, worker.text()[-4000:]
            assert worker.process.poll() is None, worker.text()[-4000:]
            time.sleep(0.3)
        log = worker.text()
        assert worker.process.poll() is None, log[-4000:]  # the worker (and beat) lived on
        assert "Unrecoverable error" not in log and "AttributeError" not in log, log[-4000:]
        for job in jobs:
            job.refresh_from_db()
            assert job.state == "submitted" and job.attempts == 1, (job.state, job.error)
            assert SimulatedSubmission.objects.filter(tag=job.tag).count() == 1
            # due before the outage: on its own time; later: once Redis is back, too
            reference = job.release_at if job.release_at < down else max(job.release_at, back)
            late = (job.submitted_at - reference).total_seconds()
            print(f"job due {job.release_at:%H:%M:%S.%f} (Redis down {down:%H:%M:%S}, back "
                  f"{back:%H:%M:%S}): submitted {late:.2f} s late")  # fmt: skip
            assert job.submitted_at >= job.release_at and late <= BOUND_S, (
                job.release_at,
                down,
                back,
                job.submitted_at,
            )
    finally:
        worker.stop()
        redis.stop()
