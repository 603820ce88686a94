"""Hostile and unlucky requests: names with CR/LF, oversize bodies, errors as JSON, login
throttling, a name race, a queue that is down, absurd traces."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.cache import cache
from kombu.exceptions import OperationalError
from rest_framework.test import APIClient

from queuecast.longrun import task_named
from tests.service.traces_support import SMALL, api_for, make_user, post_trace
from traces.models import Trace
from traces.services import ingest as ingest_module
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path / "uploads")
    return tmp_path / "uploads"


def test_export_of_a_name_with_cr_lf_is_a_safe_download(alice) -> None:
    trace = ingest_swf(SMALL, name='evil\r\nSet-Cookie: x=1"', owner=alice)  # import_swf path
    response = api_for(alice).get(f"/api/traces/{trace.pk}/export.swf")
    assert response.status_code == 200
    disposition = response["Content-Disposition"]
    assert "\r" not in disposition and "\n" not in disposition
    assert disposition.startswith("attachment; filename*=utf-8''evil%0D%0ASet-Cookie")
    assert b"".join(response.streaming_content).count(b"\n") > 12


def test_an_upload_name_with_control_characters_is_a_400_naming_the_field(alice) -> None:
    response = post_trace(api_for(alice), SMALL, name="two\r\nlines")
    assert response.status_code == 400
    assert "control characters" in str(response.json()["name"])
    assert not Trace.objects.exists()


def test_the_trace_list_leaves_the_long_header_to_the_detail(alice) -> None:
    trace = ingest_swf(SMALL, name="small", owner=alice)
    row = api_for(alice).get("/api/traces/").json()["results"][0]
    assert "header" not in row and "ingest_report" not in row
    assert "header" in api_for(alice).get(f"/api/traces/{trace.pk}/").json()


def test_an_oversize_body_is_a_json_413_before_it_is_read(alice, settings) -> None:
    settings.QUEUECAST_MAX_UPLOAD_BYTES = 1000
    client = api_for(alice)
    response = client.generic(
        "POST", "/api/traces/", b"x" * 10, content_type="multipart/form-data; boundary=b",
        CONTENT_LENGTH="999999999",
    )  # fmt: skip
    assert response.status_code == 413 and response["Content-Type"] == "application/json"
    assert response.json()["limit_bytes"] == 1000 + 64 * 1024
    json_body = client.generic(
        "POST", "/api/traces/1/replays/", b"{}", content_type="application/json",
        CONTENT_LENGTH=str(settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1),
    )  # fmt: skip
    assert json_body.status_code == 413


def test_an_unknown_api_address_is_a_json_404(alice) -> None:
    response = api_for(alice).get("/api/no-such-thing/at-all/")
    assert response.status_code == 404
    assert response.json() == {"detail": "no such address: /api/no-such-thing/at-all/"}


def test_an_api_crash_is_a_json_500_without_settings(alice, monkeypatch) -> None:
    def crash(*args, **kwargs):
        raise RuntimeError("postgres://user:secret@db/queuecast")

    monkeypatch.setattr("traces.services.filter_jobs", crash)
    trace = ingest_swf(SMALL, name="small", owner=alice)
    client = api_for(alice)
    client.raise_request_exception = False
    response = client.get(f"/api/traces/{trace.pk}/jobs/")
    assert response.status_code == 500
    assert response.json() == {"detail": "internal server error (logged)"}


def test_the_token_endpoint_is_throttled(settings) -> None:
    make_user("bob", password="right-password")
    cache.clear()
    client = APIClient()
    codes = [
        client.post("/api/token/", {"username": "bob", "password": f"guess{k}"}).status_code
        for k in range(12)
    ]
    assert codes[:10] == [400] * 10 and codes[10:] == [429, 429]
    assert "throttled" in client.post("/api/token/", {}).json()["detail"].lower()
    cache.clear()


def test_two_uploads_racing_for_one_name_give_409_not_500(alice, monkeypatch) -> None:
    first = ingest_swf(SMALL, name="same", owner=alice)
    # The second passed the name check just before the first committed.
    monkeypatch.setattr("traces.services.uploads.check_name_free", lambda name: None)
    response = post_trace(api_for(alice), SMALL, name="same")
    assert response.status_code == 409 and response.json()["field"] == "name"
    assert list(Trace.objects.values_list("pk", flat=True)) == [first.pk]


@pytest.mark.django_db(transaction=True)  # real commits: the task is sent inside the request
def test_an_upload_the_queue_refuses_is_a_503_and_frees_the_name(
    alice, monkeypatch, upload_dir
) -> None:
    def refuse(*args, **kwargs):
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr(task_named("traces.tasks.ingest_trace"), "delay", refuse)
    response = post_trace(api_for(alice), SMALL, name="wanted")
    assert response.status_code == 503 and "task queue is unavailable" in response.json()["detail"]
    assert not Trace.objects.exists()
    assert not any(Path(upload_dir).glob("trace-*"))
    monkeypatch.undo()
    assert post_trace(api_for(alice), SMALL, name="wanted").status_code == 202


def test_a_two_job_trace_running_for_3000_years_is_rejected_at_ingest(alice) -> None:
    body = (
        "; Version: 2.2\n"
        "1 0 0 100000000000 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n"
        "2 10 0 10 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n"
    )
    with pytest.raises(ingest_module.TraceFormatError, match="run_time.*out of range"):
        ingest_swf(io.BytesIO(body.encode()), name="absurd", owner=alice)
    assert not Trace.objects.exists()


def test_a_file_over_the_job_limit_is_a_413_naming_the_setting(alice, settings) -> None:
    settings.QUEUECAST_MAX_JOBS_PER_TRACE = 5
    with pytest.raises(ingest_module.TraceTooLarge, match="QUEUECAST_MAX_JOBS_PER_TRACE"):
        ingest_swf(SMALL, name="small", owner=alice)


def test_another_users_replay_page_is_a_404_like_the_api(alice, client) -> None:
    from pyss_adapter.models import Replay

    trace = ingest_swf(SMALL, name="small", owner=alice)
    replay = Replay.objects.create(trace=trace, owner=alice, status="done")
    client.force_login(make_user("bob"))
    assert client.get(f"/runs/replays/{replay.pk}/").status_code == 404
    client.force_login(alice)
    assert client.get(f"/runs/replays/{replay.pk}/").status_code == 200
