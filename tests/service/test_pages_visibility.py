"""Pages show no more than the API: another user's username and job names stay hidden on
the site page's live queue and on the hold-queue page (staff see everything)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.service.test_sites_support import FakePredictor, api_for, make_user, simulated_site

pytestmark = pytest.mark.django_db


@pytest.fixture
def site():
    return simulated_site()


def page(user, url: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def submit(site, user, name: str, **extra) -> dict:
    body = {"procs": 8, "time_limit_s": 600, "command": "sleep 1", "name": name, **extra}
    response = api_for(user).post(f"/api/sites/{site.pk}/jobs/", body, format="json")
    assert response.status_code == 201, response.data
    return response.data


def test_the_live_queue_hides_other_users_names_on_the_page_and_in_the_api(site) -> None:
    alice, bob, root = make_user("alice"), make_user("bob"), make_user("root", staff=True)
    job = submit(site, alice, "alice-secret-run", mold=False, allow_delay=False)
    assert "alice-secret-run" in page(alice, f"/sites/{site.pk}/")
    assert "alice-secret-run" in page(root, f"/sites/{site.pk}/")
    bobs = page(bob, f"/sites/{site.pk}/")
    assert "alice-secret-run" not in bobs and "alice" not in bobs
    assert "another user" in bobs  # the row is there, without its owner
    rows = {
        j["backend_job_id"]: j
        for j in api_for(bob).get(f"/api/sites/{site.pk}/queue/").data["jobs"]
    }
    assert (rows[job["backend_job_id"]]["name"], rows[job["backend_job_id"]]["user"]) == ("", "")
    assert rows[job["backend_job_id"]]["mine"] is False
    own = {
        j["backend_job_id"]: j
        for j in api_for(alice).get(f"/api/sites/{site.pk}/queue/").data["jobs"]
    }
    assert own[job["backend_job_id"]]["name"] == "alice-secret-run"
    assert own[job["backend_job_id"]]["mine"] is True


def test_the_hold_queue_page_hides_other_users_names(site, monkeypatch) -> None:
    alice, bob, root = make_user("alice"), make_user("bob"), make_user("root", staff=True)
    FakePredictor(now_wait_s=50_000.0, future_wait_s=0.0, wait_per_proc=10.0).install(monkeypatch)
    job = submit(site, alice, "alice-held-run", candidates=[4])
    assert job["state"] == "held"
    bobs = page(bob, f"/sites/{site.pk}/holdqueue/")
    assert f">{job['id']}<" in bobs  # the position is shown
    assert "alice-held-run" not in bobs and "alice" not in bobs
    for viewer in (alice, root):
        seen = page(viewer, f"/sites/{site.pk}/holdqueue/")
        assert "alice-held-run" in seen and "alice" in seen
