"""The traces REST API: upload (202 + eager ingest), reading, jobs, export, delete, schema."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from rest_framework.test import APIClient

from tests.service.traces_support import (
    BAD_FILES,
    FIXTURES,
    SMALL,
    SMALL_JOBS,
    api_for,
    database_is_empty,
    gzip_copy,
    make_user,
    post_trace,
)
from traces.core.swf import read_swf
from traces.models import Job, Trace
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path / "uploads")
    return tmp_path / "uploads"


@pytest.fixture
def small(alice) -> Trace:
    return ingest_swf(SMALL, name="small", owner=alice)


def upload(client, path, django_capture_on_commit_callbacks, **fields):
    with django_capture_on_commit_callbacks(execute=True):
        return post_trace(client, path, **fields)


def test_upload_answers_202_with_the_url_and_the_task_ingests_it(
    alice, django_capture_on_commit_callbacks, upload_dir
) -> None:
    response = upload(api_for(alice), SMALL, django_capture_on_commit_callbacks, name="up")
    assert response.status_code == 202
    assert response["Location"] == response.data["url"]
    assert response.data["status"] == "pending"
    detail = api_for(alice).get(response["Location"]).data
    assert (detail["status"], detail["progress"], detail["job_count"]) == ("done", 1.0, SMALL_JOBS)
    assert detail["owner"] == "alice" and detail["machine_procs"] == 64
    assert list(upload_dir.iterdir()) == []  # the upload is removed once ingested


def test_gzip_upload_takes_its_name_from_the_file(
    alice, django_capture_on_commit_callbacks, tmp_path
) -> None:
    gz = gzip_copy(SMALL, tmp_path / "hand-made.swf.gz")
    response = upload(api_for(alice), gz, django_capture_on_commit_callbacks)
    trace = Trace.objects.get(pk=response.data["id"])
    assert (trace.name, trace.status, trace.job_count) == ("hand-made", "done", SMALL_JOBS)


@pytest.mark.parametrize("filename", sorted(BAD_FILES))
def test_bad_upload_fails_the_trace_with_the_line_and_stores_no_job(
    alice, django_capture_on_commit_callbacks, filename
) -> None:
    response = upload(api_for(alice), FIXTURES / filename, django_capture_on_commit_callbacks)
    trace = Trace.objects.get(pk=response.data["id"])
    assert trace.status == "failed"
    assert f"line {BAD_FILES[filename][0]}" in trace.error
    assert not Job.objects.exists()


def test_lenient_upload_skips_the_bad_line(alice, django_capture_on_commit_callbacks) -> None:
    path = FIXTURES / "traces_non_number.swf"
    response = upload(api_for(alice), path, django_capture_on_commit_callbacks, lenient=True)
    detail = api_for(alice).get(response["Location"]).data
    assert detail["status"] == "done" and detail["ingest_report"]["skipped_lines"] == 1


def test_upload_over_the_size_limit_is_413_and_stores_nothing(settings, alice) -> None:
    settings.QUEUECAST_MAX_UPLOAD_BYTES = 100
    response = post_trace(api_for(alice), SMALL)
    assert response.status_code == 413
    assert "over the limit of 100 bytes" in response.data["detail"]
    assert not Trace.objects.exists()


def test_upload_refused_from_content_length_before_reading(settings, alice) -> None:
    settings.QUEUECAST_MAX_UPLOAD_BYTES = 10
    body = b"x" * (200 * 1024)
    response = api_for(alice).generic(
        "POST", "/api/traces/", body, content_type="multipart/form-data; boundary=zz"
    )
    assert response.status_code == 413
    assert not Trace.objects.exists()


def test_unauthenticated_upload_is_refused_and_stores_nothing() -> None:
    response = post_trace(APIClient(), SMALL)
    assert response.status_code in (401, 403)
    assert database_is_empty()


def test_upload_under_an_existing_name_is_409(alice, small) -> None:
    response = post_trace(api_for(alice), SMALL, name="small")
    assert response.status_code == 409
    assert "already exists" in response.data["detail"]
    assert Trace.objects.count() == 1


def test_upload_without_file_names_the_field(alice) -> None:
    response = api_for(alice).post("/api/traces/", {"name": "x"}, format="multipart")
    assert response.status_code == 400 and "file" in response.data


def test_reading_needs_a_login(small) -> None:
    assert APIClient().get("/api/traces/").status_code in (401, 403)
    assert APIClient().get(f"/api/traces/{small.pk}/").status_code in (401, 403)


def test_token_authentication_reads_the_list(alice_token_api, small) -> None:
    response = alice_token_api.get("/api/traces/")
    assert response.status_code == 200
    assert [t["name"] for t in response.data["results"]] == ["small"]


def test_obtaining_a_token_with_username_and_password() -> None:
    make_user("carol", password="carol-secret")
    response = APIClient().post("/api/token/", {"username": "carol", "password": "carol-secret"})
    assert response.status_code == 200 and response.data["token"]


def test_detail_shows_counts_span_size_utilisation_and_report(alice, small) -> None:
    body = api_for(make_user("bob")).get(f"/api/traces/{small.pk}/").data
    assert body["job_count"] == SMALL_JOBS
    assert body["span_days"] == pytest.approx(1500 / 86400)
    assert body["machine_procs"] == 64
    assert 0 < body["utilisation"] < 1
    assert body["ingest_report"]["job_lines"] == SMALL_JOBS
    assert body["jobs_url"].rstrip("/").endswith(f"/api/traces/{small.pk}/jobs")
    assert body["export_url"].endswith(f"/api/traces/{small.pk}/export.swf")


def test_jobs_are_paged_in_submit_order(alice, small) -> None:
    client = api_for(alice)
    first = client.get(f"/api/traces/{small.pk}/jobs/?page_size=5").data
    assert first["count"] == SMALL_JOBS and len(first["results"]) == 5
    assert [j["job_number"] for j in first["results"]] == [1, 2, 3, 4, 5]
    last = client.get(first["next"]).data
    assert [j["job_number"] for j in last["results"]] == [6, 7, 8, 9, 10]


@pytest.mark.parametrize(
    ("query", "numbers"),
    [
        ("user=1", [1, 3, 6, 10, 12]),
        ("queue=2", [2, 4, 6, 8, 10, 12]),
        ("submit_after=300&submit_before=900", [7, 8, 9]),
        ("user=1&queue=2&submit_after=600", [10, 12]),
    ],
)
def test_jobs_filter_by_user_queue_and_submit_window(alice, small, query, numbers) -> None:
    body = api_for(alice).get(f"/api/traces/{small.pk}/jobs/?{query}").data
    assert [j["job_number"] for j in body["results"]] == numbers


def test_jobs_filter_rejects_an_empty_window(alice, small) -> None:
    response = api_for(alice).get(f"/api/traces/{small.pk}/jobs/?submit_after=9&submit_before=1")
    assert response.status_code == 400 and "submit_before" in response.data


def test_export_round_trip_gives_the_stored_trace(alice, small) -> None:
    response = api_for(alice).get(f"/api/traces/{small.pk}/export.swf")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    text = b"".join(response.streaming_content)
    again = read_swf(io.BytesIO(text))
    original = read_swf(SMALL)
    assert again.header.computer == original.header.computer
    assert again.header.max_procs == 64
    pd.testing.assert_frame_equal(again.jobs, original.jobs)


def test_export_of_a_failed_trace_is_409(alice) -> None:
    trace = Trace.objects.create(name="broken", owner=alice, status="failed", error="line 3")
    assert api_for(alice).get(f"/api/traces/{trace.pk}/export.swf").status_code == 409


def test_delete_by_another_user_is_403_and_keeps_the_trace(small) -> None:
    response = api_for(make_user("mallory")).delete(f"/api/traces/{small.pk}/")
    assert response.status_code == 403
    assert Trace.objects.filter(pk=small.pk).exists()
    assert Job.objects.count() == SMALL_JOBS


def test_delete_by_the_owner_removes_trace_and_jobs(alice, small) -> None:
    assert api_for(alice).delete(f"/api/traces/{small.pk}/").status_code == 204
    assert database_is_empty()


def test_delete_by_staff_is_allowed(small) -> None:
    staff = make_user("root", staff=True)
    assert api_for(staff).delete(f"/api/traces/{small.pk}/").status_code == 204
    assert not Trace.objects.exists()


def test_schema_generates(alice) -> None:
    response = api_for(alice).get("/api/schema/")
    assert response.status_code == 200
    assert b"/api/traces/{id}/jobs/" in response.content


def test_a_trace_imported_without_owner_shows_none_and_only_staff_may_delete(alice) -> None:
    trace = ingest_swf(SMALL, name="ownerless")
    assert api_for(alice).get(f"/api/traces/{trace.pk}/").data["owner"] is None
    assert api_for(alice).delete(f"/api/traces/{trace.pk}/").status_code == 403


def test_upload_over_the_traces_per_user_limit_is_409(settings, alice, small) -> None:
    settings.QUEUECAST_MAX_TRACES_PER_USER = 1
    response = post_trace(api_for(alice), SMALL, name="second")
    assert response.status_code == 409
    assert "QUEUECAST_MAX_TRACES_PER_USER" in response.data["detail"]
    assert Trace.objects.count() == 1


def test_jobs_of_a_missing_trace_is_404(alice) -> None:
    assert api_for(alice).get("/api/traces/999/jobs/").status_code == 404


def test_openapi_schema_generates_without_warnings(tmp_path) -> None:
    from django.core.management import call_command

    out = tmp_path / "schema.yml"
    call_command("spectacular", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    for path in ("/api/traces/", "/api/evaluations/", "predictions/wait", "predictions/runtime"):
        assert path in text


def test_an_upload_that_is_not_multipart_is_the_documented_415_and_stores_nothing(alice) -> None:
    response = api_for(alice).post("/api/traces/", {"name": "x"}, format="json")
    assert response.status_code == 415
    assert not Trace.objects.exists()
    schema = APIClient().get("/api/schema/?format=json").json()
    assert "415" in schema["paths"]["/api/traces/"]["post"]["responses"]
