"""Browser pages: login, list with progress, upload form, detail with the report, delete."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from queuecast.longrun import Status
from tests.service.traces_support import FIXTURES, SMALL, SMALL_JOBS, make_user
from traces.models import Trace
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path / "uploads")


def test_pages_need_a_login() -> None:
    response = Client().get("/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_login_page_renders() -> None:
    assert b"Log in" in Client().get("/accounts/login/").content


def test_list_shows_traces_and_refreshes_while_one_is_ingesting(browser, alice) -> None:
    ingest_swf(SMALL, name="small", owner=alice)
    assert b'http-equiv="refresh"' not in browser.get("/").content
    Trace.objects.create(
        name="busy", status=Status.RUNNING, started_at=timezone.now(), progress=0.3
    )
    page = browser.get("/").content.decode()
    assert "small" in page and "busy" in page and 'http-equiv="refresh"' in page


def test_upload_form_ingests_and_shows_the_detail(browser, django_capture_on_commit_callbacks):
    with SMALL.open("rb") as handle, django_capture_on_commit_callbacks(execute=True):
        response = browser.post("/upload/", {"file": handle, "name": "via-page"})
    trace = Trace.objects.get(name="via-page")
    assert response.status_code == 302 and response["Location"] == f"/traces/{trace.pk}/"
    page = browser.get(response["Location"]).content.decode()
    assert trace.job_count == SMALL_JOBS and "Ingest report" in page and "Missing run time" in page


def test_upload_form_shows_a_name_conflict(browser, alice) -> None:
    ingest_swf(SMALL, name="small", owner=alice)
    with SMALL.open("rb") as handle:
        response = browser.post("/upload/", {"file": handle, "name": "small"})
    assert response.status_code == 200 and b"already exists" in response.content


def test_detail_of_a_failed_trace_shows_the_reason(browser) -> None:
    trace = Trace.objects.create(name="bad", status=Status.FAILED, error="line 17: not a number")
    assert b"line 17: not a number" in browser.get(f"/traces/{trace.pk}/").content


def test_delete_button_only_for_owner_and_delete_by_other_is_403(browser, alice) -> None:
    trace = ingest_swf(FIXTURES / "traces_small.swf", name="small", owner=alice)
    assert b"Delete" in browser.get(f"/traces/{trace.pk}/").content
    other = Client()
    other.force_login(make_user("mallory"))
    assert b"Delete</button>" not in other.get(f"/traces/{trace.pk}/").content
    assert other.post(f"/traces/{trace.pk}/delete/").status_code == 403
    assert browser.post(f"/traces/{trace.pk}/delete/").status_code == 302
    assert not Trace.objects.exists()
