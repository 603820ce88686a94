"""Hostile values answer 400 naming the field, never 500: huge numbers, far-off dates,
deeply nested JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from predictor.services import predict
from tests.core.wait_fakes import make_jobs
from tests.service.test_sites_support import job_body, simulated_site
from tests.service.traces_support import api_for, make_user
from traces.core.swf import format_jobs
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db

HUGE = 10**30


def names(response, field: str) -> bool:
    """The 400 names ``field``: as a key (serializer errors) or as ``field`` (service errors)."""
    body = response.json()
    return field in body or body.get("field") == field


@pytest.fixture
def trace(tmp_path: Path):
    path = tmp_path / "demo.swf"
    path.write_text(format_jobs(make_jobs(300)))  # no MaxProcs: procs bounded by the jobs only
    predict.BUNDLES.clear()
    return ingest_swf(path, name="demo")


@pytest.fixture
def alice():
    return make_user("alice")


def query(trace, **changes):
    body = {
        "user_id": 2, "group_id": 1, "queue_id": 1, "requested_procs": 8,
        "requested_time": 3600.0, "at": (trace.first_submit_s + trace.last_submit_s) / 2,
    }  # fmt: skip
    return {**body, **changes}


@pytest.mark.parametrize("kind", ["wait", "runtime"])
@pytest.mark.parametrize(
    "field",
    ["user_id", "group_id", "queue_id", "requested_procs", "requested_time", "at"],
)
def test_a_huge_number_in_a_trace_prediction_is_a_400_naming_it(trace, alice, kind, field):
    client = api_for(alice)
    url = f"/api/traces/{trace.pk}/predictions/{kind}"
    response = client.post(url, query(trace, **{field: HUGE}), format="json")
    assert response.status_code == 400, response.content
    assert names(response, field)


@pytest.mark.parametrize("field", ["procs", "time_limit_s"])
def test_a_huge_number_in_a_site_job_is_a_400_naming_it(alice, field):
    site = simulated_site()
    body = job_body(mold=False, allow_delay=False, **{field: HUGE})
    response = api_for(alice).post(f"/api/sites/{site.pk}/jobs/", body, format="json")
    assert response.status_code == 400, response.content
    assert names(response, field)


@pytest.mark.parametrize("field", ["procs", "time_limit_s"])
def test_a_huge_number_in_a_site_prediction_is_a_400_naming_it(alice, field):
    site = simulated_site()
    body = {"procs": 4, "time_limit_s": 600, field: HUGE}
    response = api_for(alice).post(f"/api/sites/{site.pk}/predict/", body, format="json")
    assert response.status_code == 400, response.content
    assert names(response, field)


@pytest.mark.parametrize(
    ("at", "status"),
    [("9999-12-31T23:59:59Z", 400), ("9999-12-31", 400), ("0001-01-01T00:00:00Z", 409)],
)
def test_a_far_off_date_in_a_site_prediction_is_refused_naming_it(alice, at, status):
    site = simulated_site()
    body = {"procs": 4, "time_limit_s": 600, "at": at}
    response = api_for(alice).post(f"/api/sites/{site.pk}/predict/", body, format="json")
    assert response.status_code == status, response.content
    assert names(response, "at")


@pytest.mark.parametrize("depth", [100_000, 2_000])
def test_a_deeply_nested_json_body_is_a_400(alice, depth):
    site = simulated_site()
    body = "[" * depth + "]" * depth
    response = api_for(alice).post(
        f"/api/sites/{site.pk}/jobs/", body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert "nested" in response.json()["detail"]


def test_the_idempotency_key_limit_is_the_column_length() -> None:
    """A key the API accepts always fits its column (no 500 from PostgreSQL's varchar)."""
    from holdqueue.models import SiteJob
    from holdqueue.services.idempotency import MAX_KEY_CHARS

    assert SiteJob._meta.get_field("idempotency_key").max_length == MAX_KEY_CHARS
