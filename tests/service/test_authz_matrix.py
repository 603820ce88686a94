"""Who may do what, over every endpoint of the schema and every role.

Roles: anonymous, the owner of the objects, another user, staff. Rules (docs/operations.md):
- anonymous: every endpoint but the token endpoint answers 401/403;
- traces are a shared library: any logged-in user reads them and may start runs on them;
  only the owner or staff delete one (another user: 403);
- runs (evaluations, replays, molding runs) are private: another user gets 404 on every
  address of one, the owner and staff read it;
- nobody ever gets a 500.
New endpoints join the matrix by themselves (read from the OpenAPI schema).
"""

from __future__ import annotations

import re

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from predictor.models import EvaluationRun
from pyss_adapter.models import Replay
from tests.service.traces_support import SMALL, api_for, make_user
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db
METHODS = ("get", "post", "put", "patch", "delete")
PRIVATE_RUNS = {"evaluations": EvaluationRun, "replays": Replay}
try:
    from jobmolding.models import MoldingRun

    PRIVATE_RUNS["molding-runs"] = MoldingRun
except ImportError:  # the molding app is optional in the matrix
    pass


def endpoints() -> list[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [(path, m) for path, ops in schema["paths"].items() for m in METHODS if m in ops]


ENDPOINTS = endpoints()
ROLES = ("anonymous", "owner", "other", "staff")


@pytest.fixture
def world():
    alice = make_user("alice")
    trace = ingest_swf(SMALL, name="small", owner=alice)
    ids = {"traces": trace.pk, "trace_pk": trace.pk}
    for prefix, model in PRIVATE_RUNS.items():
        ids[prefix] = model.objects.create(owner=alice, trace=trace, status="done").pk
    users = {
        "anonymous": None,
        "owner": alice,
        "other": make_user("bob"),
        "staff": make_user("root", staff=True),
    }
    return ids, users


def resource(path: str) -> str:
    return path.split("/")[2]


def concrete(path: str, ids: dict[str, int]) -> str:
    path = path.replace("{trace_pk}", str(ids["trace_pk"]))
    path = path.replace("{id}", str(ids.get(resource(path), 1)))
    path = path.replace("{name}", "load")  # a plot name (the route takes letters only)
    return re.sub(r"\{[a-z_]+\}", "1", path)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("path", "method"), ENDPOINTS, ids=[f"{m} {p}" for p, m in ENDPOINTS])
def test_authorisation_matrix(world, path: str, method: str, role: str) -> None:
    ids, users = world
    client = api_for(users[role]) if users[role] else APIClient()
    client.raise_request_exception = False
    status = getattr(client, method)(concrete(path, ids), {}, format="json").status_code
    assert status != 500, f"{role} {method.upper()} {path}: 500"
    if path == "/api/token/":
        return
    if role == "anonymous":
        assert status in (401, 403), f"anonymous {method.upper()} {path}: {status}"
        return
    private = resource(path) in PRIVATE_RUNS and "{id}" in path
    if private and role == "other":
        assert status == 404, f"another user {method.upper()} {path}: {status} (a private run)"
    elif private and method == "get" and path.endswith("/{id}/"):
        assert status == 200, f"{role} GET {path}: {status} (their own run / staff)"
    elif private:
        assert status not in (401, 403), f"{role} {method.upper()} {path}: {status}"
    elif resource(path) == "traces" and "{id}" in path:
        expected_other = 403 if method == "delete" else None
        if role == "other" and expected_other:
            assert status == expected_other
        else:
            assert status not in (401, 403, 404), f"{role} {method.upper()} {path}: {status}"
    elif resource(path) == "traces":
        assert status not in (401, 403), f"{role} {method.upper()} {path}: {status}"


def test_the_matrix_covers_every_kind_of_endpoint() -> None:
    kinds = {resource(p) for p, _ in ENDPOINTS}
    assert {"traces", "evaluations", "replays", "token"} <= kinds
