"""Schemathesis against the generated OpenAPI schema, in process (bounded examples).

Every operation is called with generated input as a logged-in user who owns one done
trace; no response may be a 500, and every status code must be one the schema documents
(``queuecast/schema.py`` documents the project-wide errors). The example count is bounded
(``QUEUECAST_SCHEMATHESIS_EXAMPLES``, default 5 per operation) so CI stays quick.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import status_code_conformance

from queuecast.wsgi import application
from tests.service.traces_support import SMALL, make_user
from traces.services import ingest_swf

EXAMPLES = int(os.environ.get("QUEUECAST_SCHEMATHESIS_EXAMPLES", "5"))
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)


@pytest.fixture(autouse=True)
def keep_the_test_connection():
    """The WSGI app closes "old" connections at each request's start and end; inside the test's
    transaction that would close PostgreSQL's test connection (Django's test client does the same
    unhooking)."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def token(settings, tmp_path) -> str:
    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path / "uploads")
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"login": "1000/min"},
    }
    user = make_user("fuzz")
    ingest_swf(SMALL, name="fuzz-small", owner=user)
    return Token.objects.create(user=user).key


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api_conforms_to_its_schema(case, token) -> None:
    case.call_and_validate(
        headers={"Authorization": f"Token {token}"},
        checks=[not_a_server_error, status_code_conformance],
    )
