"""A job whose owner asks it to start no earlier than a time (``begin``/``begin_in_s``, as
``sbatch --begin``): held until then and submitted as asked, no hold-queue head, released
early from its page like any held job, the request checked field by field."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from holdqueue.models import SimulatedSubmission, SiteJob
from holdqueue.services.sweep import release_due
from tests.service.test_sites_support import FakePredictor, api_for, job_body, simulated_site

pytestmark = pytest.mark.django_db


@pytest.fixture
def site():
    return simulated_site()


def post(client, site, **extra):
    return client.post(f"/api/sites/{site.pk}/jobs/", job_body(**extra), format="json")


def test_a_job_asked_to_begin_later_is_held_until_then_as_asked(site, alice, monkeypatch):
    predictor = FakePredictor(wait_per_proc=100.0).install(monkeypatch)
    before = timezone.now()
    response = post(api_for(alice), site, procs=16, begin_in_s=600, candidates=[8])
    assert response.status_code == 201, response.data
    job = response.data
    assert job["state"] == "held" and job["backend_job_id"] == ""
    assert job["procs_chosen"] == 16 and job["time_limit_s"] == 600  # as asked, not molded
    release = dt.datetime.fromisoformat(job["release_at"])
    assert (
        before + dt.timedelta(seconds=600) <= release <= timezone.now() + dt.timedelta(seconds=600)
    )
    assert job["decision"]["begin"]["at"] and job["decision"]["molding"] is None
    assert predictor.calls == 0  # nothing was predicted for it
    assert job["head"] is None  # no hold-queue head: nobody queues behind a user's own time
    held = api_for(alice).get(f"/api/sites/{site.pk}/holdqueue/").data
    assert [h["id"] for h in held] == [job["id"]]
    assert release_due() == 0  # not due yet
    SiteJob.objects.filter(pk=job["id"]).update(release_at=timezone.now())
    assert release_due() == 1
    row = SiteJob.objects.get(pk=job["id"])
    assert row.state == "submitted" and row.procs_chosen == 16
    assert SimulatedSubmission.objects.filter(tag=row.tag).count() == 1


def test_other_arrivals_do_not_queue_behind_a_users_own_start_time(site, alice, monkeypatch):
    FakePredictor().install(monkeypatch)
    client = api_for(alice)
    later = timezone.now() + dt.timedelta(hours=2)
    assert post(client, site, begin=later.isoformat()).data["state"] == "held"
    now = post(client, site, mold=False)
    assert now.status_code == 201 and now.data["state"] == "submitted"
    assert "hold" not in now.data["decision"]


def test_a_begin_already_past_submits_now_through_the_usual_decision(site, alice, monkeypatch):
    FakePredictor().install(monkeypatch)
    past = timezone.now() - dt.timedelta(minutes=5)
    job = post(api_for(alice), site, begin=past.isoformat()).data
    assert job["state"] == "submitted" and "begin" not in job["decision"]
    assert job["decision"]["molding"] is not None


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"begin_in_s": 0}, "begin_in_s"),
        ({"begin_in_s": 31 * 86400}, "begin_in_s"),
        ({"begin": "tomorrow"}, "begin"),
        ({"begin": "2099-01-01T00:00:00Z"}, "begin"),
        ({"begin": "2099-01-01T00:00:00Z", "begin_in_s": 60}, "begin"),
    ],
)
def test_bad_start_times_are_rejected_naming_the_field(site, alice, extra, field) -> None:
    response = post(api_for(alice), site, **extra)
    assert response.status_code == 400 and field in response.data, response.data
    assert not SiteJob.objects.filter(site=site).exists()


def test_pages_say_the_owner_asked_for_the_hold_and_offer_release(site, alice, monkeypatch):
    FakePredictor().install(monkeypatch)
    job = post(api_for(alice), site, begin_in_s=3600, name="later-one").data
    client = Client()
    client.force_login(alice)
    page = client.get(f"/sites/{site.pk}/jobs/{job['id']}/").content.decode()
    assert "held at your request until" in page and 'id="release-job"' in page
    assert "You asked it to start no earlier than" in page
    queue = client.get(f"/sites/{site.pk}/holdqueue/").content.decode()
    assert "later-one" in queue and "asked to start then" in queue
    form = client.get(f"/sites/{site.pk}/").content.decode()
    assert 'data-seconds-field="begin_in_s"' in form
    released = api_for(alice).post(f"/api/sites/{site.pk}/jobs/{job['id']}/release/")
    assert released.status_code == 200 and released.data["state"] == "submitted"
