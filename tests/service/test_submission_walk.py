"""A site submission walks down once (issue 22): the service reads the site's inputs once,
then hands plain data down. Spies count the backend builds and the history reads of one
``POST /api/sites/{id}/jobs/``, on a site whose bundle is fitted by that very request (the
fit must reuse the submission's read) and on one whose bundle is already fitted."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections import Counter
from typing import Any

import pytest

import holdqueue
from holdqueue.services import backends as bk
from holdqueue.services import history
from tests.service.test_sites_support import api_for, job_body, simulated_site

pytestmark = pytest.mark.django_db


def spy_on(monkeypatch, calls: Counter, module: Any, name: str) -> None:
    """Count calls of ``module.name``, under every name a holdqueue module imported it as.

    Every holdqueue module is imported first: one first imported during the request would
    bind the spy by ``from ... import`` and keep it after the spy is undone.
    """
    for info in pkgutil.walk_packages(holdqueue.__path__, "holdqueue."):
        if ".migrations" not in info.name and ".management" not in info.name:
            importlib.import_module(info.name)
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return real(*args, **kwargs)

    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").split(".")[0] == "holdqueue" and (
            getattr(mod, name, None) is real
        ):
            monkeypatch.setattr(mod, name, counted)


def submit(monkeypatch, site, user, **body: Any) -> tuple[Counter, dict]:
    calls: Counter = Counter()
    with monkeypatch.context() as m:
        spy_on(m, calls, bk, "backend_for")
        spy_on(m, calls, history, "history_frame")
        response = api_for(user).post(
            f"/api/sites/{site.pk}/jobs/", job_body(**body), format="json"
        )
    assert response.status_code in (201, 202), response.data
    return calls, response.data


def test_a_submission_builds_the_backend_once_and_reads_the_history_once(alice, monkeypatch):
    site = simulated_site()
    cold, first = submit(monkeypatch, site, alice)  # fits the site's bundle on the way
    warm, second = submit(monkeypatch, site, alice)
    assert first["decision"]["molding"] is not None  # the decision was made on predictions
    assert second["decision"]["molding"] is not None
    for calls in (cold, warm):
        assert calls["backend_for"] == 1, calls
        assert calls["history_frame"] == 1, calls


def test_a_submission_without_a_decision_builds_the_backend_once_and_reads_the_history_once(
    alice, monkeypatch
):
    """Its prediction (kept for the page) needs the site's bundle: the history is read once
    to fit it, and not at all once it is fitted."""
    site = simulated_site()
    cold, job = submit(monkeypatch, site, alice, mold=False, allow_delay=False)
    warm, _ = submit(monkeypatch, site, alice, mold=False, allow_delay=False)
    assert job["state"] in ("submitted", "submitting", "pending", "running")
    assert job["decision"]["prediction"] is not None
    assert cold["backend_for"] == 1 and cold["history_frame"] == 1, cold
    assert warm["backend_for"] == 1 and warm["history_frame"] == 0, warm
