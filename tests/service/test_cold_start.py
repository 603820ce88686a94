"""A request never fits a model: while no bundle is stored it answers 503 with Retry-After and
the fit's status, at once, and the real answer once the background fit stored it
(``predictor.services.background_fit``)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from holdqueue.services import predict as site_predict
from predictor.services import background_fit
from predictor.services import predict as predict_service
from predictor.services.fitted_cache import store_key
from predictor.services.fitted_store import default_store
from tests.service.test_sites_support import simulated_site
from tests.service.traces_support import api_for, demo_trace, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def trace(tmp_path: Path):
    predict_service.BUNDLES.clear()
    return demo_trace(tmp_path)


def body(trace) -> dict:
    at = (trace.first_submit_s + trace.last_submit_s) / 2
    return {"user_id": 2, "group_id": 1, "queue_id": 1, "requested_procs": 8,
            "requested_time": 3600.0, "at": at}  # fmt: skip


def ask(client, trace):
    return client.post(f"/api/traces/{trace.pk}/predictions/wait", body(trace), format="json")


def test_a_503_being_fitted_is_logged_at_info_not_as_a_server_error(trace, alice, caplog):
    store, (ident, _) = default_store(), store_key(trace)
    client = api_for(alice)
    with caplog.at_level(logging.INFO), store.lock("trace", ident):
        res = ask(client, trace)
    assert res.status_code == 503
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert [r for r in caplog.records if r.name == "queuecast.errors" and "503" in r.message]


def test_a_request_while_another_process_fits_the_trace_answers_503_at_once(trace, alice):
    store, (ident, version) = default_store(), store_key(trace)
    client = api_for(alice)
    assert client.get(f"/api/traces/{trace.pk}/").status_code == 200  # imports, first query
    with store.lock("trace", ident):  # another process holds the fit lock, and says so
        status = {"state": "fitting", "version": version, "started_at": time.time() - 42}
        store.write_status("trace", ident, {**status, "pid": 4242})
        started = time.monotonic()
        res = ask(client, trace)
        took = time.monotonic() - started
    assert took < 0.5, took  # it did not wait for the fit (nor fit itself: over 1 s here)
    assert res.status_code == 503 and res["Retry-After"] == "10"
    data = res.json()
    assert data["status"] == "fitting" and data["fitting_pid"] == 4242
    assert data["elapsed_s"] >= 42 and "being fitted" in data["detail"]
    assert store.load("trace", ident, version) is None  # nothing fitted by the request
    # The lock released (that process gone), the next request's background fit stores it.
    res = ask(client, trace)
    assert res.status_code == 200, res.json()
    assert store.load("trace", ident, version) is not None
    assert store.read_status("trace", ident) is None  # done: no status left


def test_the_request_after_a_background_fit_gets_the_real_answer(trace, alice, monkeypatch):
    started: list = []
    monkeypatch.setattr(background_fit, "spawn", lambda work, name: started.append(work))
    client = api_for(alice)
    cold = ask(client, trace)
    assert cold.status_code == 503 and cold.json()["status"] == "fitting"
    again = ask(client, trace)  # still fitting: no second fit started in this process
    assert again.status_code == 503 and len(started) == 1
    started[0]()  # the background thread runs
    res = ask(client, trace)
    assert res.status_code == 200, res.json()
    direct = predict_service.predict_wait(trace, body(trace))
    assert res.json()["wait_s"] == direct["wait_s"] and res.json()["method"] == direct["method"]


def test_a_failed_background_fit_is_reported_and_not_retried_at_once(trace, alice, monkeypatch):
    def broken(t):
        raise RuntimeError("the state sweep broke")

    monkeypatch.setattr(predict_service.BUNDLES, "fit", broken)
    client = api_for(alice)
    first, second = ask(client, trace), ask(client, trace)
    for res in (first, second):
        assert res.status_code == 503 and res.json()["status"] == "failed"
        assert "RuntimeError: the state sweep broke" in res.json()["detail"]
        assert 0 < int(res["Retry-After"]) <= background_fit.FAILED_RETRY_S


def test_warm_predictions_fits_every_trace_so_the_first_request_is_answered(trace, alice):
    call_command("warm_predictions", "--all", "--fit-only")
    predict_service.BUNDLES.clear()  # as a fresh web process
    assert default_store().load("trace", *store_key(trace)) is not None
    assert ask(api_for(alice), trace).status_code == 200


def test_a_site_being_fitted_by_another_process_answers_503_at_once() -> None:
    site = simulated_site()
    store, ident = default_store(), site_predict._ident(site)
    client = api_for(make_user("alice"))
    url = f"/api/sites/{site.pk}/predict/"
    with store.lock("site", ident):
        started = time.monotonic()
        res = client.post(url, {"procs": 8, "time_limit_s": 3600}, format="json")
        assert time.monotonic() - started < 2.0
    assert res.status_code == 503 and res["Retry-After"] and res.json()["status"] == "fitting"
    call_command("warm_site_models")  # start-up's warm-up: stored for every process
    site_predict._MODELS.clear()
    res = client.post(url, {"procs": 8, "time_limit_s": 3600}, format="json")
    assert res.status_code == 200, res.json()
