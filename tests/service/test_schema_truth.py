"""The OpenAPI schema says what the server does: 401 (with ``WWW-Authenticate``) when not
logged in, 403 when not allowed, and for every list endpoint the shape it returns
(a paginated object or a bare list)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.service.test_sites_support import api_for, job_body, make_user, simulated_site
from tests.service.traces_support import SMALL
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    alice = make_user("alice")
    site = simulated_site()
    trace = ingest_swf(SMALL, name="small", owner=alice)
    return {"alice": alice, "site": site, "trace": trace}


@pytest.fixture
def schema(world) -> dict[str, Any]:
    return api_for(world["alice"]).get("/api/schema/", {"format": "json"}).json()


def url_of(path: str, world: dict[str, Any]) -> str:
    """A schema path with its ids filled: sites' from the site, traces' from the trace."""
    pk = world["site"].pk if path.startswith("/api/sites/") else world["trace"].pk
    return re.sub(r"\{(id|pk|trace_pk)\}", str(pk), path)


def body_kind(operation: dict[str, Any], components: dict[str, Any]) -> str:
    content = operation["responses"]["200"].get("content", {}).get("application/json", {})
    ref = content.get("schema", {})
    if ref.get("type") == "array":
        return "list"
    name = ref.get("$ref", "").rsplit("/", 1)[-1]
    return "paginated" if name.startswith("Paginated") else "object"


def test_every_list_endpoint_returns_the_shape_its_schema_documents(world, schema) -> None:
    client = api_for(world["alice"])
    checked = {}
    for path, operations in schema["paths"].items():
        get = operations.get("get")
        if get is None or "200" not in get["responses"] or re.search(r"\{(jid)\}", path):
            continue
        kind = body_kind(get, schema["components"])
        if kind == "object":
            continue
        response = client.get(url_of(path, world))
        assert response.status_code == 200, (path, response.content[:300])
        body = response.json()
        got = "paginated" if isinstance(body, dict) and "results" in body else "list"
        checked[path] = (kind, got)
    assert "/api/sites/{id}/holdqueue/" in checked and len(checked) >= 6
    assert {p: c for p, c in checked.items() if c[0] != c[1]} == {}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/traces/"),
        ("get", "/api/sites/"),
        ("get", "/api/sites/{id}/holdqueue/"),
        ("post", "/api/sites/{id}/jobs/"),
        ("get", "/api/evaluations/"),
    ],
)
def test_not_logged_in_is_the_documented_401_with_its_challenge(world, schema, method, path):
    response = getattr(APIClient(), method)(url_of(path, world), job_body(), format="json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert "401" in schema["paths"][path][method]["responses"]


def test_a_logged_in_user_not_allowed_is_the_documented_403(world, schema) -> None:
    body = {"name": "mine", "backend": "simulated", "machine_procs": 8}
    response = api_for(world["alice"]).post("/api/sites/", body, format="json")
    assert response.status_code == 403
    assert "403" in schema["paths"]["/api/sites/"]["post"]["responses"]
