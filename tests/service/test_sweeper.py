"""The embedded sweeper is not serial: an sbatch that hangs holds one thread, and every other
due job is released meanwhile (``holdqueue/services/sweeper.py``).

The steps are stand-ins here (the real ones are the serial sweep's, tested with the
database elsewhere): a pass must dispatch and return, never wait for a release.
"""

from __future__ import annotations

import threading
import time

import pytest

from holdqueue.services import sweeper as module
from holdqueue.services.sweeper import Sweeper


class Cluster:
    """Jobs 1-3 at site 1, whose sbatch hangs until ``go`` is set; jobs 4-6 at site 2."""

    def __init__(self) -> None:
        self.state = {pk: "held" for pk in range(1, 7)}
        self.site = {pk: 1 if pk <= 3 else 2 for pk in self.state}
        self.go = threading.Event()
        self.lock = threading.Lock()
        self.sbatch_calls: list[int] = []

    def due_ids(self) -> list[int]:
        with self.lock:
            return [pk for pk, s in self.state.items() if s == "held"]

    def release_job(self, pk: int) -> None:
        with self.lock:
            if self.state[pk] != "held":  # the row lock: only a held job is claimed
                return
            self.state[pk] = "submitting"
            self.sbatch_calls.append(pk)
        if self.site[pk] == 1:
            assert self.go.wait(30), "the test never let the hung sbatch go"
        with self.lock:
            self.state[pk] = "submitted"

    def install(self, monkeypatch) -> None:
        monkeypatch.setattr(module, "check_sites", lambda: 0)
        monkeypatch.setattr(module, "queue_upcoming", lambda: 0)
        monkeypatch.setattr(module, "stale_ids", lambda: [])
        monkeypatch.setattr(module, "sites_to_sync", lambda _: [])
        monkeypatch.setattr(module, "due_ids", self.due_ids)
        monkeypatch.setattr(module, "site_of", lambda ids: [(pk, self.site[pk]) for pk in ids])
        monkeypatch.setattr(module, "release_job", self.release_job)


def until(condition, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def cluster(monkeypatch) -> Cluster:
    c = Cluster()
    c.install(monkeypatch)
    return c


def test_a_hung_sbatch_at_one_site_delays_no_release_at_the_others(cluster) -> None:
    sweeper = Sweeper(threads=3, per_site=1)
    try:
        started = time.monotonic()
        for _ in range(5):  # every pass returns at once: nothing waits for the hung sbatch
            sweeper.pass_once()
            until(lambda: not sweeper.busy - {("release", 1)}, 2.0)
        assert time.monotonic() - started < 5.0
        assert [cluster.state[pk] for pk in (4, 5, 6)] == ["submitted"] * 3
        assert [cluster.state[pk] for pk in (1, 2, 3)] == ["submitting", "held", "held"]
        assert cluster.sbatch_calls.count(1) == 1  # never dispatched twice while in flight
        cluster.go.set()
        for _ in range(5):
            sweeper.pass_once()
            sweeper.idle()
        assert set(cluster.state.values()) == {"submitted"}
        assert sorted(cluster.sbatch_calls) == [1, 2, 3, 4, 5, 6]
    finally:
        cluster.go.set()
        sweeper.close(wait=True)


def test_a_site_never_takes_more_than_its_share_of_threads(cluster) -> None:
    cluster.site = dict.fromkeys(cluster.state, 1)  # every job at the hung site
    sweeper = Sweeper(threads=4, per_site=2)
    try:
        for _ in range(3):
            sweeper.pass_once()
        assert until(lambda: len(cluster.sbatch_calls) == 2)
        time.sleep(0.2)
        assert len(cluster.sbatch_calls) == 2 and sweeper.site_load[1] == 2
    finally:
        cluster.go.set()
        sweeper.close(wait=True)


def test_a_step_that_raises_is_logged_and_the_loop_goes_on(cluster, monkeypatch) -> None:
    def broken(pk: int) -> None:
        raise RuntimeError(f"job {pk} is poison")

    monkeypatch.setattr(module, "release_job", broken)
    sweeper = Sweeper(threads=2)
    try:
        sweeper.pass_once()
        assert sweeper.idle() and not sweeper.busy
        monkeypatch.setattr(module, "release_job", cluster.release_job)
        cluster.go.set()
        sweeper.pass_once()
        assert sweeper.idle() and set(cluster.state.values()) <= {"submitted", "held"}
    finally:
        sweeper.close(wait=True)


@pytest.mark.django_db(transaction=True)
def test_the_sweepers_real_steps_release_a_due_job_once(settings) -> None:
    from django.utils import timezone

    from holdqueue.models import SiteJob
    from tests.service.test_sites_support import make_user, simulated_site

    site = simulated_site()
    type(site).objects.filter(pk=site.pk).update(synced_until=timezone.now())  # no sync now
    job = SiteJob.objects.create(
        site=site, owner=make_user("alice"), script="#!/bin/sh\n", procs_requested=2,
        procs_chosen=2, time_limit_s=60, state=SiteJob.HELD, arrived_at=timezone.now(),
        release_at=timezone.now(),
    )  # fmt: skip
    sweeper = Sweeper(threads=2)
    try:
        assert sweeper.pass_once()["release"] == 1
        assert sweeper.idle()
        job.refresh_from_db()
        assert (job.state, job.attempts) == ("submitted", 1)
    finally:
        sweeper.close(wait=True)
