"""The hold queue survives a worker killed by SIGKILL: every held job is released once, none
twice, each within a stated bound of its time, into the real dev Slurm.

Set-up: one Celery worker (with its embedded beat, sweeping every second) takes the jobs' ETA
tasks, then is killed with SIGKILL (its whole process group: worker and beat). Two jobs come
due while nothing runs. Then *two* workers start, each with its own beat, so two sweeps race
for every due row: the row lock and the ``held -> submitting`` transition must let exactly one
of them submit. Bound: a job is submitted within ``BOUND_S`` of the later of its release time
and the moment the first restarted worker is ready (sweep period 1 s + one ``sbatch``).

Needs PostgreSQL, Redis and the dev Slurm (CI: QUEUECAST_WORKER_TESTS=1 with
``CELERY_BROKER_URL=redis://...`` and ``DATABASE_URL=postgres://...``).
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.utils import timezone

from holdqueue.models import SiteJob
from holdqueue.services.jobs import schedule_release
from tests.service.test_sites_support import held
from tests.slurm.conftest import slurm_jobs_tagged
from tests.worker_support import require_real_services, route_to, worker_database_url

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.worker,
    pytest.mark.skipif(
        os.environ.get("QUEUECAST_WORKER_TESTS") != "1",
        reason="real-worker test: set QUEUECAST_WORKER_TESTS=1 with CELERY_BROKER_URL=redis://... "
        "and DATABASE_URL=postgres://... (CI does)",
    ),
]
ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 6.0
READY_TIMEOUT_S = 90


class Worker:
    """``celery worker -B`` on a private queue, in its own process group."""

    def __init__(self, tmp_path: Path, queue: str, name: str) -> None:
        self.log = tmp_path / f"{name}.log"
        env = {
            **os.environ,
            "DATABASE_URL": worker_database_url(),
            "QUEUECAST_CELERY_QUEUE": queue,
            "QUEUECAST_HOLD_SWEEP_S": "1",
            "QUEUECAST_SITE_SYNC_S": "3600",
        }
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "queuecast",
            "worker",
            "-P",
            "solo",
            "-Q",
            queue,
            "-n",
            f"{name}-{queue}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-B",
            "-s",
            str(tmp_path / f"beat-{name}"),
            "--loglevel=INFO",
        ]
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=out, stderr=out, start_new_session=True
            )

    def wait_ready(self) -> dt.datetime:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if "ready." in self.log.read_text(errors="replace"):
                return timezone.now()
            assert self.process.poll() is None, self.log.read_text(errors="replace")[-3000:]
            time.sleep(0.2)
        raise AssertionError(f"worker not ready:\n{self.log.read_text(errors='replace')[-3000:]}")

    def wait_for(self, text: str, count: int) -> None:
        """Until the log shows ``count`` tasks named ``text`` received."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            log = self.log.read_text(errors="replace")
            if sum(text in line and "received" in line for line in log.splitlines()) >= count:
                return
            time.sleep(0.2)
        raise AssertionError(f"the worker never got the tasks:\n{log[-3000:]}")

    def kill(self, sig: int) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def queue():
    name = f"queuecast-test-{uuid.uuid4().hex[:8]}"
    default = route_to(name)
    yield name
    route_to(default)


def hold(site, owner, name: str, release_at: dt.datetime) -> SiteJob:
    job = held(site, owner, name=name, script="#!/bin/sh\nsleep 20\n", release_at=release_at)
    schedule_release(job)
    return job


@pytest.mark.django_db(transaction=True)
def test_sigkilled_worker_loses_no_release_and_two_workers_release_each_job_once(
    slurm_site, slurm_conf, job_name, queue, tmp_path
) -> None:
    from tests.service.test_sites_support import make_user

    require_real_services()
    owner = make_user("alice")
    first = Worker(tmp_path, queue, "w1")
    workers = [first]
    try:
        first.wait_ready()
        # Margins for a slow machine: the first worker must hold all four ETA tasks, and die,
        # before the first job is due.
        now = timezone.now()
        due = [now + dt.timedelta(seconds=s) for s in (20, 21, 40, 41)]
        jobs = [hold(slurm_site, owner, job_name, at) for at in due]
        first.wait_for("release_site_job", count=len(jobs))
        first.kill(signal.SIGKILL)
        assert timezone.now() < due[0], "the machine is too slow for this test's margins"
        time.sleep(max((due[1] - timezone.now()).total_seconds() + 1, 0))
        assert set(
            SiteJob.objects.filter(pk__in=[j.pk for j in jobs]).values_list("state", flat=True)
        ) == {"held"}
        workers += [Worker(tmp_path, queue, "w2"), Worker(tmp_path, queue, "w3")]
        ready = min([w.wait_ready() for w in workers[1:]])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            states = list(
                SiteJob.objects.filter(pk__in=[j.pk for j in jobs]).values_list("state", flat=True)
            )
            if all(s != "held" and s != "submitting" for s in states):
                break
            time.sleep(0.5)
        logs = "\n".join(w.log.read_text(errors="replace")[-1500:] for w in workers)
        for job in jobs:
            job.refresh_from_db()
            # submitted, and maybe synced since (pending/running): in the batch system once
            assert job.state in SiteJob.IN_BATCH and job.attempts == 1, (job.state, job.error, logs)
            assert len(slurm_jobs_tagged(slurm_conf, job.tag)) == 1, "released twice"
            late = (job.submitted_at - max(job.release_at, ready)).total_seconds()
            assert job.submitted_at >= job.release_at and late <= BOUND_S, (
                job.release_at,
                ready,
                job.submitted_at,
            )
    finally:
        for worker in workers:
            worker.kill(signal.SIGTERM)
