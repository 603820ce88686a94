"""The live-site API on the simulated backend: sites, queue, jobs (molded, held, released,
cancelled), idempotency, permissions and bad input."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from django.utils import timezone

from holdqueue.core.backends.base import BackendUnavailable
from holdqueue.models import SimulatedSubmission, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services.sweep import release_due
from tests.service.test_sites_support import (
    FakePredictor,
    api_for,
    install_answers,
    job_body,
    make_user,
    simulated_site,
)
from tests.service.test_sites_support import (
    held as held_row,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def site():
    return simulated_site()


def post_job(client, site, headers=None, **extra):
    return client.post(
        f"/api/sites/{site.pk}/jobs/", job_body(**extra), format="json", headers=headers or {}
    )


# --- sites ----------------------------------------------------------------------------------
def test_only_staff_create_sites(site, staff_api) -> None:
    body = {"name": "other", "backend": "simulated", "trace": site.trace_id}
    assert api_for(make_user("bob")).post("/api/sites/", body, format="json").status_code == 403
    response = staff_api.post("/api/sites/", body, format="json")
    assert response.status_code == 201, response.data
    assert response.data["machine_procs"] == 64 and response.data["history_jobs"] > 0


def test_backend_config_is_shown_to_staff_only(site, alice, staff_api) -> None:
    assert staff_api.get(f"/api/sites/{site.pk}/").data["config"] == {"speed": 1.0}
    assert api_for(alice).get(f"/api/sites/{site.pk}/").data["config"] == {}
    assert api_for(alice).get("/api/sites/").data["results"][0]["config"] == {}


def test_site_config_with_an_unknown_key_is_rejected_naming_it(site, staff_api) -> None:
    body = {"name": "x", "backend": "slurm", "machine_procs": 8, "config": {"sped": 2}}
    response = staff_api.post("/api/sites/", body, format="json")
    assert response.status_code == 400 and "sped" in str(response.data["config"])


def test_site_detail_reports_the_live_queue(site, alice) -> None:
    body = api_for(alice).get(f"/api/sites/{site.pk}/").data
    assert body["running_jobs"] >= 1 and 0 < body["utilisation"] <= 1
    queue = api_for(alice).get(f"/api/sites/{site.pk}/queue/").data
    assert len(queue["jobs"]) == body["running_jobs"] + body["queue_length"]


def test_unknown_site_is_404_and_anonymous_is_refused(site, alice) -> None:
    assert api_for(alice).get("/api/sites/999/").status_code == 404
    assert api_for(None).get("/api/sites/").status_code in (401, 403)
    assert api_for(None).post(f"/api/sites/{site.pk}/jobs/", job_body()).status_code in (401, 403)


# --- jobs -----------------------------------------------------------------------------------
def test_job_with_molding_and_delay_off_is_submitted_as_asked(site, alice, monkeypatch) -> None:
    fake = FakePredictor().install(monkeypatch)
    response = post_job(api_for(alice), site, mold=False, allow_delay=False)
    assert response.status_code == 201, response.data
    job = response.data
    assert (job["state"], job["procs_chosen"], job["release_at"]) == ("submitted", 8, None)
    # asked once, for its prediction at its own size (kept for its page), never to decide
    assert fake.calls == 1 and job["decision"]["prediction"]["procs"] == 8
    queued = {j["tag"]: j for j in api_for(alice).get(f"/api/sites/{site.pk}/queue/").data["jobs"]}
    assert queued[job["tag"]]["procs"] == 8
    assert queued[job["tag"]]["backend_job_id"] == job["backend_job_id"]


def test_molding_picks_the_candidate_with_the_best_response(site, alice, monkeypatch) -> None:
    FakePredictor(wait_per_proc=500.0).install(monkeypatch)
    response = post_job(api_for(alice), site, procs=16, candidates=[4], allow_delay=False)
    job = response.data
    assert (job["state"], job["procs_requested"], job["procs_chosen"]) == ("submitted", 16, 4)
    sizes = [c["procs"] for c in job["decision"]["molding"]["candidates"]]
    assert sizes == [4, 16]
    assert SimulatedSubmission.objects.get(tag=job["tag"]).procs == 4


def held_job(client, site, monkeypatch, **extra):
    FakePredictor(now_wait_s=50_000.0, future_wait_s=0.0).install(monkeypatch)
    response = post_job(client, site, **extra)
    assert response.status_code == 201, response.data
    return response.data


def test_a_job_is_held_when_waiting_pays_and_released_once_when_due(site, alice, monkeypatch):
    job = held_job(api_for(alice), site, monkeypatch)
    assert job["state"] == "held" and job["decision"]["delay"]["delay"] is True
    assert job["backend_job_id"] == "" and job["release_at"] is not None
    held = api_for(alice).get(f"/api/sites/{site.pk}/holdqueue/").data
    assert [h["id"] for h in held] == [job["id"]] and held[0]["mine"] is True
    assert release_due() == 0  # not due yet
    SiteJob.objects.filter(pk=job["id"]).update(release_at=timezone.now())
    assert release_due() == 1
    assert release_due() == 0  # nothing twice
    row = SiteJob.objects.get(pk=job["id"])
    assert row.state == "submitted" and row.attempts == 1
    assert SimulatedSubmission.objects.filter(tag=row.tag).count() == 1


def test_arrivals_during_a_hold_queue_behind_it_with_their_spacing(site, alice, monkeypatch):
    client = api_for(alice)
    head = held_job(client, site, monkeypatch)
    follower = post_job(client, site).data
    row_head, row_f = SiteJob.objects.get(pk=head["id"]), SiteJob.objects.get(pk=follower["id"])
    assert row_f.state == "held" and row_f.head_id == row_head.pk
    spacing = row_f.arrived_at - row_head.arrived_at
    assert abs((row_f.release_at - row_head.release_at) - spacing) < dt.timedelta(milliseconds=2)
    # Released early, the head takes its followers along (spacing kept).
    released = client.post(f"/api/sites/{site.pk}/jobs/{head['id']}/release/")
    assert released.status_code == 200 and released.data["state"] == "submitted"
    row_f.refresh_from_db()
    assert row_f.release_at - SiteJob.objects.get(pk=head["id"]).submitted_at < spacing + (
        dt.timedelta(seconds=1)
    )


def test_cancel_while_held_and_after_submission(site, alice, monkeypatch) -> None:
    client = api_for(alice)
    job = held_job(client, site, monkeypatch)
    cancelled = client.post(f"/api/sites/{site.pk}/jobs/{job['id']}/cancel/")
    assert cancelled.data["state"] == "cancelled"
    assert client.post(f"/api/sites/{site.pk}/jobs/{job['id']}/cancel/").status_code == 409
    sent = post_job(client, site, mold=False, allow_delay=False).data
    done = client.post(f"/api/sites/{site.pk}/jobs/{sent['id']}/cancel/")
    assert done.data["state"] == "cancelled"
    assert SimulatedSubmission.objects.get(tag=sent["tag"]).cancel_ts is not None


def test_idempotency_key_returns_the_first_answer(site, alice, monkeypatch) -> None:
    FakePredictor().install(monkeypatch)
    client = api_for(alice)
    key = {"Idempotency-Key": "abc-1"}
    first = post_job(client, site, headers=key, mold=False, allow_delay=False)
    again = post_job(client, site, headers=key, mold=False, allow_delay=False)
    assert first.status_code == again.status_code == 201
    assert again.data == first.data and again["Idempotent-Replayed"] == "true"
    assert SimulatedSubmission.objects.filter(site=site).count() == 1
    other = post_job(client, site, headers=key, procs=2, mold=False, allow_delay=False)
    assert other.status_code == 409 and "different request" in other.data["detail"]


def test_users_see_and_change_only_their_own_jobs(site, alice, monkeypatch, staff_api) -> None:
    job = held_job(api_for(alice), site, monkeypatch)
    bob = api_for(make_user("bob"))
    assert bob.get(f"/api/sites/{site.pk}/jobs/{job['id']}/").status_code == 404
    assert bob.post(f"/api/sites/{site.pk}/jobs/{job['id']}/cancel/").status_code == 404
    assert bob.get(f"/api/sites/{site.pk}/jobs/").data["count"] == 0
    held = bob.get(f"/api/sites/{site.pk}/holdqueue/").data
    assert held[0]["owner"] == "" and held[0]["mine"] is False
    assert staff_api.get(f"/api/sites/{site.pk}/jobs/{job['id']}/").status_code == 200


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"procs": 0}, "procs"),
        ({"procs": -3}, "procs"),
        ({"procs": 65}, "procs"),
        ({"time_limit_s": 0}, "time_limit_s"),
        ({"time_limit_s": 10**9}, "time_limit_s"),
        ({"script": "echo no shebang"}, "script"),
        ({"candidates": [4, 1000]}, "candidates"),
    ],
)
def test_bad_jobs_are_rejected_naming_the_field_and_store_nothing(site, alice, extra, field):
    response = post_job(api_for(alice), site, **extra)
    assert response.status_code == 400, response.data
    assert field in str(response.data)
    assert not SiteJob.objects.exists()


def test_script_over_the_size_limit_is_rejected(site, alice, settings) -> None:
    settings.QUEUECAST_MAX_SCRIPT_BYTES = 100
    response = post_job(api_for(alice), site, command=None, script="#!/bin/sh\n" + "x" * 200)
    assert response.status_code == 400 and "limit is 100" in response.data["detail"]
    assert not SiteJob.objects.exists()


class DownBackend:
    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise BackendUnavailable("slurm_load_jobs error: Unable to contact slurm controller")

        return fail


def test_a_backend_that_is_down_gives_503_with_the_reason_and_stores_nothing(
    site, alice, monkeypatch
) -> None:
    monkeypatch.setattr(bk, "backend_for", lambda site: DownBackend())
    client = api_for(alice)
    for response in (
        client.get(f"/api/sites/{site.pk}/queue/"),
        post_job(client, site),
        post_job(client, site, mold=False, allow_delay=False),
    ):
        assert response.status_code == 503
        assert "Unable to contact slurm controller" in response.data["detail"]
    assert not SiteJob.objects.exists()


def test_a_held_job_whose_submission_keeps_failing_ends_failed_with_the_message(
    site, alice, monkeypatch, settings
) -> None:
    job = held_job(api_for(alice), site, monkeypatch)
    monkeypatch.setattr(bk, "backend_for", lambda site: DownBackend())
    settings.QUEUECAST_RELEASE_ATTEMPTS = 2
    for _ in range(2):
        SiteJob.objects.filter(pk=job["id"]).update(release_at=timezone.now())
        release_due()
    row = SiteJob.objects.get(pk=job["id"])
    assert row.state == "failed" and "Unable to contact" in row.error and row.attempts == 2


def test_a_job_the_backend_refuses_is_failed_with_its_message(site, alice, monkeypatch) -> None:
    from holdqueue.core.backends.base import SubmissionRejected

    class Refusing(DownBackend):
        def submit(self, spec):
            raise SubmissionRejected("sbatch: error: Invalid partition name specified")

    monkeypatch.setattr(bk, "backend_for", lambda site: Refusing())
    response = post_job(api_for(alice), site, mold=False, allow_delay=False)
    assert response.status_code == 201
    assert response.data["state"] == "failed" and "Invalid partition" in response.data["error"]


def test_schema_lists_the_site_endpoints(alice) -> None:
    schema = api_for(alice).get("/api/schema/", {"format": "json"}).json()
    paths = set(schema["paths"])
    for path in (
        "/api/sites/",
        "/api/sites/{id}/",
        "/api/sites/{id}/queue/",
        "/api/sites/{id}/predict/",
        "/api/sites/{id}/jobs/",
        "/api/sites/{id}/jobs/{jid}/",
        "/api/sites/{id}/jobs/{jid}/release/",
        "/api/sites/{id}/jobs/{jid}/cancel/",
        "/api/sites/{id}/holdqueue/",
    ):
        assert any(p.rstrip("/") == path.rstrip("/") for p in paths), path


def test_release_tasks_are_queued_with_an_eta_in_broker_mode(
    site, alice, monkeypatch, settings, django_capture_on_commit_callbacks
):
    from holdqueue.tasks import release_site_job

    queued = []
    monkeypatch.setattr(
        release_site_job, "apply_async", lambda args, eta: queued.append((args, eta))
    )
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with django_capture_on_commit_callbacks(execute=True):
        job = held_job(api_for(alice), site, monkeypatch)
    row = SiteJob.objects.get(pk=job["id"])
    assert queued == [((row.pk,), row.release_at)]


def test_a_broker_that_is_down_loses_no_held_job(
    site, alice, monkeypatch, settings, django_capture_on_commit_callbacks
) -> None:
    from holdqueue.tasks import release_site_job

    def down(*args, **kwargs):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379")

    monkeypatch.setattr(release_site_job, "apply_async", down)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with django_capture_on_commit_callbacks(execute=True):
        job = held_job(api_for(alice), site, monkeypatch)
    assert job["state"] == "held"
    SiteJob.objects.filter(pk=job["id"]).update(release_at=timezone.now())
    assert release_due() == 1  # the sweep releases what the task would have


def test_a_lost_submission_is_held_again_and_released_once(site, alice, settings) -> None:
    from holdqueue.services.sweep import reconcile_submitting

    job = held_row(site, alice, name="lost", script="#!/bin/sh\n", state=SiteJob.SUBMITTING)
    settings.QUEUECAST_SUBMIT_LEASE_S = 0
    assert reconcile_submitting() == 1  # nothing carries its tag: it never reached the backend
    job.refresh_from_db()
    assert job.state == "held"
    assert release_due() == 1 and release_due() == 0
    job.refresh_from_db()
    assert job.state == "submitted"
    assert SimulatedSubmission.objects.filter(tag=job.tag).count() == 1


def test_release_of_a_job_that_is_not_held_is_a_conflict(site, alice, monkeypatch) -> None:
    FakePredictor().install(monkeypatch)
    client = api_for(alice)
    sent = post_job(client, site, mold=False, allow_delay=False).data
    response = client.post(f"/api/sites/{site.pk}/jobs/{sent['id']}/release/")
    assert response.status_code == 409 and "only a held job" in response.data["detail"]


def test_the_future_candidates_see_the_site_advanced_to_their_arrival(site, alice, monkeypatch):
    """The delay's second look predicts on the snapshot moved to t (``jobmolding.core.future``),
    not on now's queue beside a machine whose ended jobs were only taken out."""
    seen = []
    fake = FakePredictor(now_wait_s=50_000.0, future_wait_s=0.0)

    def recording(site_, snapshot, batch):
        seen.append((snapshot.time_s, snapshot.known_at_s, batch.submit_s.copy()))
        return fake(site_, snapshot, batch)

    install_answers(monkeypatch, recording)
    job = post_job(api_for(alice), site).data
    assert job["state"] == "held"
    future = [(t, known, submit) for t, known, submit in seen if (submit > known + 1e-6).all()]
    assert future, seen
    for t, known, submit in future:
        assert t > known and np.allclose(submit, t)
