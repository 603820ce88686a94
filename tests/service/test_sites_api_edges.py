"""The live-site API's edges: Idempotency-Key bound to the whole body, site predictions
bounded by the machine and to one's own user, clear cancel errors, release tasks that are
never redelivered while a job is held, and job states that follow the batch system."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from holdqueue.core.backends.base import BackendError, BackendJob
from holdqueue.models import SiteJob
from holdqueue.services import backends as bk
from holdqueue.services.eta import queue_upcoming, schedule_release
from holdqueue.services.sweep import sync_site
from tests.service.test_sites_support import api_for, job_body, make_user, simulated_site

pytestmark = pytest.mark.django_db


@pytest.fixture
def site():
    return simulated_site()


def post(client, site, headers=None, **extra):
    body = job_body(mold=False, allow_delay=False, **extra)
    return client.post(f"/api/sites/{site.pk}/jobs/", body, format="json", headers=headers or {})


# --- Idempotency-Key ---------------------------------------------------------------------------
def test_a_key_replayed_with_another_command_is_refused(site, alice) -> None:
    client = api_for(alice)
    first = post(client, site, {"Idempotency-Key": "k"}, command="sleep 1")
    assert first.status_code == 201
    other = post(client, site, {"Idempotency-Key": "k"}, command="rm -rf ~")
    assert other.status_code == 409 and "body differs" in other.data["detail"]
    same = client.post(  # the same request, keys in another order: a replay
        f"/api/sites/{site.pk}/jobs/",
        {"allow_delay": False, "mold": False, **job_body(command="sleep 1")},
        format="json",
        headers={"Idempotency-Key": "k"},
    )
    assert same.status_code == 201 and same.data["id"] == first.data["id"]
    assert same["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize(
    ("key", "words"),
    [("   ", "only whitespace"), ("", "only whitespace"), ("k" * 201, "the limit is 200")],
)
def test_a_blank_or_overlong_key_is_refused_and_stores_nothing(site, alice, key, words) -> None:
    response = post(api_for(alice), site, {"Idempotency-Key": key})
    assert response.status_code == 400 and words in response.data["detail"]
    assert response.data["field"] == "Idempotency-Key" and not SiteJob.objects.exists()


def test_a_key_of_200_characters_is_kept(site, alice) -> None:
    key = "k" * 200
    assert post(api_for(alice), site, {"Idempotency-Key": key}).status_code == 201
    assert SiteJob.objects.get().idempotency_key == key


# --- site predictions --------------------------------------------------------------------------
def test_predict_refuses_more_processors_than_the_machine(site, alice) -> None:
    body = {"procs": 10**12, "time_limit_s": 600}
    response = api_for(alice).post(f"/api/sites/{site.pk}/predict/", body, format="json")
    assert response.status_code == 400 and "procs" in response.data
    body["procs"] = site.machine_procs + 1
    response = api_for(alice).post(f"/api/sites/{site.pk}/predict/", body, format="json")
    assert response.status_code == 400 and f"at most {site.machine_procs}" in str(response.data)


def test_predict_for_another_user_is_refused_except_to_staff(site, alice, monkeypatch) -> None:
    from holdqueue.services import predict
    from holdqueue.services.errors import WrongState

    seen = []

    def answered(site_, user, data):
        seen.append(data["user"])
        raise WrongState("stop here")

    monkeypatch.setattr(predict, "predict_for_query", answered)
    body = {"procs": 4, "time_limit_s": 600, "user": "bob"}
    response = api_for(alice).post(f"/api/sites/{site.pk}/predict/", body, format="json")
    assert response.status_code == 400 and "only about your own" in str(response.data["user"])
    body["user"] = "alice"
    api_for(alice).post(f"/api/sites/{site.pk}/predict/", body, format="json")
    body["user"] = "bob"
    api_for(make_user("root", staff=True)).post(
        f"/api/sites/{site.pk}/predict/", body, format="json"
    )
    assert seen == ["alice", "bob"]


# --- cancel ----------------------------------------------------------------------------------
class RefusingCancel:
    def __init__(self, real) -> None:
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    def cancel(self, backend_id: str) -> None:
        raise BackendError("scancel: error: Kill job error on job id 7: Access/permission denied")


def test_a_cancel_the_batch_system_refuses_is_a_502_with_its_message(site, alice, monkeypatch):
    job = post(api_for(alice), site).data
    real = bk.backend_for
    monkeypatch.setattr(bk, "backend_for", lambda s: RefusingCancel(real(s)))
    response = api_for(alice).post(f"/api/sites/{site.pk}/jobs/{job['id']}/cancel/")
    assert response.status_code == 502 and "permission denied" in response.data["detail"]
    assert SiteJob.objects.get(pk=job["id"]).state == "submitted"


# --- release tasks within half the visibility timeout ------------------------------------------
def test_release_tasks_are_queued_only_when_due_within_the_horizon(
    site, alice, monkeypatch, settings
):
    from holdqueue.tasks import release_site_job

    queued = []
    monkeypatch.setattr(release_site_job, "apply_async", lambda args, eta: queued.append(args))
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.QUEUECAST_RELEASE_TASK_HORIZON_S = 150
    later = timezone.now() + dt.timedelta(hours=10)
    job = SiteJob.objects.create(
        site=site, owner=alice, script="#!/bin/sh\n", procs_requested=2, procs_chosen=2,
        time_limit_s=60, state=SiteJob.HELD, arrived_at=timezone.now(), release_at=later,
    )  # fmt: skip
    # Ten hours out: a task now would be redelivered every visibility timeout (300 s).
    assert schedule_release(job) is False and queued == []
    assert queue_upcoming() == 0
    SiteJob.objects.filter(pk=job.pk).update(release_at=timezone.now() + dt.timedelta(seconds=60))
    assert queue_upcoming() == 1 and queued == [(job.pk,)]
    assert queue_upcoming() == 0  # once per release time
    SiteJob.objects.filter(pk=job.pk).update(release_at=timezone.now() + dt.timedelta(seconds=90))
    assert queue_upcoming() == 1  # moved (released early by its head): queued for the new time


# --- job state from the batch system ---------------------------------------------------------
class Reporting:
    """A backend that reports given jobs (and nothing finished unless told)."""

    def __init__(self, active=(), finished=()) -> None:
        self._active, self._finished = list(active), list(finished)
        self.cancelled: list[str] = []

    def active(self):
        return self._active

    def finished_since(self, since_ts):
        return self._finished

    def cancel(self, backend_id: str) -> None:
        self.cancelled.append(backend_id)


def reported(job, state, outcome, start=None, end=None, bid=None) -> BackendJob:
    return BackendJob(
        backend_id=bid or job.backend_job_id, tag=job.tag, name="", user="", procs=2,
        time_limit_s=60.0, state=state, outcome=outcome, submit_ts=1.0e9, start_ts=start,
        end_ts=end,
    )  # fmt: skip


def test_job_states_follow_the_batch_system_with_start_and_end(site, alice, monkeypatch):
    job = SiteJob.objects.get(pk=post(api_for(alice), site).data["id"])
    assert job.state == "submitted"
    t0 = timezone.now().timestamp() - 100
    for backend, state in (
        (Reporting([reported(job, "waiting", "PENDING")]), "pending"),
        (Reporting([reported(job, "running", "RUNNING", start=t0)]), "running"),
        (Reporting([], [reported(job, "finished", "COMPLETED", t0, t0 + 40)]), "finished"),
        (Reporting([reported(job, "running", "RUNNING", start=t0)]), "finished"),  # never back
    ):
        monkeypatch.setattr(bk, "backend_for", lambda s, b=backend: b)
        sync_site(site)
        job.refresh_from_db()
        assert job.state == state
    assert job.started_at.timestamp() == pytest.approx(t0)
    assert job.run_s == pytest.approx(40.0) and job.backend_state == "COMPLETED"
    api = api_for(alice).get(f"/api/sites/{site.pk}/jobs/{job.pk}/").data
    assert (api["state"], api["started_at"] is not None, api["ended_at"] is not None) == (
        "finished",
        True,
        True,
    )
    browser = Client()
    browser.force_login(alice)
    page = browser.get(f"/sites/{site.pk}/jobs/{job.pk}/").content.decode()
    assert "finished" in page and 'id="job-started"' in page and "after 40 s" in page


def test_a_job_cancelled_outside_queuecast_ends_cancelled(site, alice, monkeypatch) -> None:
    job = SiteJob.objects.get(pk=post(api_for(alice), site).data["id"])
    backend = Reporting([], [reported(job, "finished", "CANCELLED by 0", None, 1.0e9)])
    monkeypatch.setattr(bk, "backend_for", lambda s: backend)
    sync_site(site)
    job.refresh_from_db()
    assert (job.state, job.backend_state) == ("cancelled", "CANCELLED by 0")


def test_a_row_in_doubt_is_settled_when_the_sync_sees_its_tag(site, alice, monkeypatch) -> None:
    job = SiteJob.objects.create(
        site=site, owner=alice, script="#!/bin/sh\n", procs_requested=2, procs_chosen=2,
        time_limit_s=60, state=SiteJob.SUBMITTING, in_doubt=True, arrived_at=timezone.now(),
        error="sbatch did not answer within 20 s",
    )  # fmt: skip
    backend = Reporting([reported(job, "running", "RUNNING", start=1.0e9, bid="77")])
    monkeypatch.setattr(bk, "backend_for", lambda s: backend)
    sync_site(site)
    job.refresh_from_db()
    assert (job.state, job.backend_job_id, job.in_doubt, job.error) == ("running", "77", False, "")
