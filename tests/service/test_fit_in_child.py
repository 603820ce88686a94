"""A background fit runs in a child process (``manage.py fit_model`` / ``fit_site_model``), not
in a thread of the web worker that holds the GIL, and stays single flight across processes
through the store's lock (``predictor.services.background_fit``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection

from predictor.services import background_fit, fitted_cache, warm
from predictor.services import predict as predict_service
from predictor.services.fitted_cache import store_key
from predictor.services.fitted_store import default_store
from tests.service.traces_support import api_for, demo_trace

pytestmark = pytest.mark.django_db


def body(trace) -> dict:
    at = (trace.first_submit_s + trace.last_submit_s) / 2
    return {"user_id": 2, "group_id": 1, "queue_id": 1, "requested_procs": 8,
            "requested_time": 3600.0, "at": at}  # fmt: skip


def test_a_request_fits_in_a_child_process_and_answers_from_its_file(tmp_path, alice, monkeypatch):
    predict_service.BUNDLES.clear()
    trace = demo_trace(tmp_path)
    children: list[list[str]] = []
    in_child: list[bool] = []
    real_fit = predict_service.BUNDLES.fit

    def child(args: list[str]) -> int:  # the child process, run here (same database)
        children.append(args)
        in_child.append(True)
        try:
            call_command(*args)
        finally:
            in_child.pop()
        return 0

    def fit(t):
        assert in_child, "the worker's own thread fitted"
        return real_fit(t)

    monkeypatch.setattr(fitted_cache, "inline", lambda: False)  # a shared database
    monkeypatch.setattr(fitted_cache, "run_in_child", child)
    monkeypatch.setattr(background_fit, "spawn", lambda work, name: work())
    monkeypatch.setattr(predict_service.BUNDLES, "fit", fit)
    res = api_for(alice).post(
        f"/api/traces/{trace.pk}/predictions/wait", body(trace), format="json"
    )
    assert children == [["fit_model", str(trace.pk)]]
    assert res.status_code == 200, res.json()
    store, (ident, version) = default_store(), store_key(trace)
    assert store.load("trace", ident, version) is not None
    assert store.read_status("trace", ident) is None  # the child cleared its status


def test_the_child_fits_nothing_while_another_process_holds_the_lock(tmp_path):
    trace = demo_trace(tmp_path)
    store, (ident, version) = default_store(), store_key(trace)
    with store.lock("trace", ident):  # another process is fitting
        call_command("fit_model", str(trace.pk))
    assert store.load("trace", ident, version) is None
    call_command("fit_model", str(trace.pk), "--wait", "zero")  # another key: not locked
    assert store.load("trace-zero-rangeset", ident, version) is not None


def test_run_in_child_starts_a_real_manage_py_process_and_reports_its_failure(
    tmp_path: Path, monkeypatch, caplog
):
    """A real child (its own, empty database file): the command is found and its failure
    (no such trace) comes back as the exit code and a logged warning."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    env = {"QUEUECAST_DATABASE_NAME": str(tmp_path / "db.sqlite3"),
           "QUEUECAST_FITTED_DIR": str(tmp_path / "fitted")}  # fmt: skip
    monkeypatch.setattr(background_fit, "child_env", lambda: {**os.environ, **env})
    monkeypatch.setattr(background_fit, "CHILD_NICE", 0)  # no nicer than the test run
    assert background_fit.run_in_child(["fit_model", "999"]) != 0
    assert "fit_model 999" in caplog.text
    assert not list(tmp_path.glob("fitted/*.pkl"))


def test_the_child_uses_this_process_database_and_fitted_store(settings, tmp_path):
    """A test run's (or any overridden) database and store reach the child, which would
    otherwise read the settings' defaults and fit a trace it cannot see."""
    settings.QUEUECAST_FITTED_DIR = str(tmp_path / "elsewhere")
    env = background_fit.child_env()
    assert env["QUEUECAST_DATABASE_NAME"] == str(connection.settings_dict["NAME"])
    assert env["QUEUECAST_FITTED_DIR"] == str(tmp_path / "elsewhere")


def test_a_child_past_its_time_limit_is_killed(tmp_path: Path, monkeypatch, caplog):
    """A real child that would run 60 s is killed at a 3 s limit: the call returns
    ``TIMED_OUT`` well before the child would have ended, and says so in the log."""
    import time

    monkeypatch.delenv("DATABASE_URL", raising=False)
    env = {"QUEUECAST_DATABASE_NAME": str(tmp_path / "db.sqlite3"),
           "QUEUECAST_FITTED_DIR": str(tmp_path / "fitted")}  # fmt: skip
    monkeypatch.setattr(background_fit, "child_env", lambda: {**os.environ, **env})
    monkeypatch.setattr(background_fit, "CHILD_NICE", 0)
    began = time.monotonic()
    code = background_fit.run_in_child(["shell", "-c", "import time; time.sleep(60)"], 3.0)
    assert code == background_fit.TIMED_OUT
    assert time.monotonic() - began < 30
    assert "killed at its time limit of 3 s" in caplog.text


def test_a_fit_killed_at_its_time_limit_fails_the_requests_with_the_reason(
    tmp_path, alice, monkeypatch, settings
):
    """The killed child could not clear its "fitting" status: the request's answer says the
    fit failed at the time limit (and when it is tried again), not "being fitted" forever."""
    predict_service.BUNDLES.clear()
    trace = demo_trace(tmp_path)
    store, (ident, version) = default_store(), store_key(trace)
    settings.QUEUECAST_RUN_TIME_LIMIT_S = 7

    def child(args: list[str]) -> int:  # a child that began the fit and was killed
        store.write_status("trace", ident, {"state": "fitting", "version": version,
                                            "started_at": 0.0, "pid": 1})  # fmt: skip
        return background_fit.TIMED_OUT

    monkeypatch.setattr(fitted_cache, "inline", lambda: False)
    monkeypatch.setattr(fitted_cache, "run_in_child", child)
    monkeypatch.setattr(background_fit, "spawn", lambda work, name: work())
    res = api_for(alice).post(
        f"/api/traces/{trace.pk}/predictions/wait", body(trace), format="json"
    )
    assert res.status_code == 503
    assert "time limit reached (7 s)" in str(res.json())
    assert store.read_status("trace", ident)["state"] == "failed"


def test_no_child_fits_once_the_code_on_disk_changed_and_requests_say_to_restart(
    tmp_path, alice, monkeypatch, caplog
):
    """A process left running across a code change: a child would store the model under the
    new code's tag, which this process never loads, so each request would start the same
    fit again (15 minutes on HPC2N, over and over). No child starts; the answer says why."""
    from predictor.services import fitted_store

    predict_service.BUNDLES.clear()
    trace = demo_trace(tmp_path)
    monkeypatch.setattr(fitted_store, "code_on_disk", lambda: "0123456789ab")  # edited since
    children: list[object] = []
    monkeypatch.setattr(background_fit.subprocess, "run", lambda *a, **k: children.append(a))
    monkeypatch.setattr(fitted_cache, "inline", lambda: False)  # a shared database
    monkeypatch.setattr(background_fit, "spawn", lambda work, name: work())
    for _ in range(2):
        res = api_for(alice).post(
            f"/api/traces/{trace.pk}/predictions/wait", body(trace), format="json"
        )
        assert res.status_code == 503
        assert "restart the process" in str(res.json())
    assert children == []
    store, (ident, _) = default_store(), store_key(trace)
    assert store.read_status("trace", ident)["state"] == "failed"
    assert "no fit in a child" in caplog.text


def test_the_child_warms_every_row_once_the_bundle_is_stored(tmp_path, settings):
    """After the service's own fit the child predicts every test-part row and scores every
    runtime (warm_predictions' work), so a trace uploaded while the server runs answers any past
    instant warm; not for a method override, not when turned off, not twice at once."""
    predict_service.BUNDLES.clear()
    trace = demo_trace(tmp_path)
    store, (ident, version) = default_store(), store_key(trace)
    settings.QUEUECAST_WARM_AFTER_FIT = False
    call_command("fit_model", str(trace.pk))
    assert store.load("trace", ident, version) is not None
    assert store.load("rows", ident, version) is None  # fitted, not warmed
    settings.QUEUECAST_WARM_AFTER_FIT = True
    call_command("fit_model", str(trace.pk), "--wait", "zero")  # an override: not warmed
    assert store.load("rows", ident, version) is None
    with store.lock("warm", ident):  # another process is warming it
        call_command("fit_model", str(trace.pk))
    assert store.load("rows", ident, version) is None
    call_command("fit_model", str(trace.pk))
    bundle = predict_service.bundle_for(trace, block=True)
    known = predict_service.recent_scorer(bundle).known.order  # every started job
    rows = store.load("rows", ident, version)
    np.testing.assert_array_equal(np.flatnonzero(rows["known"]), np.sort(known))
    assert known.min() < bundle.wait_ctx.n_tune  # the tuning part's rows too
    terms = store.load("runtime_rows-trace", ident, version)
    ended = np.flatnonzero(bundle.runtime_ctx.run_s > 0)
    np.testing.assert_array_equal(np.flatnonzero(terms["known"]), ended)


def test_warm_predictions_skips_a_trace_another_process_is_warming(tmp_path, capsys):
    predict_service.BUNDLES.clear()
    trace = demo_trace(tmp_path)
    store, (ident, version) = default_store(), store_key(trace)
    with store.lock("warm", ident):
        call_command("warm_predictions", trace.name)
    assert f"{trace.name}: another process is warming it" in capsys.readouterr().out
    assert store.load("rows", ident, version) is None
    call_command("warm_predictions", trace.name)
    assert "runtimes scored" in capsys.readouterr().out
    assert store.load("rows", ident, version)["known"].any()
    assert store.load("runtime_rows-trace", ident, version)["known"].any()


def test_a_warm_up_stores_its_rows_as_it_goes(tmp_path, monkeypatch):
    """Merged into the store every MERGE_EVERY chunks: a warm-up stopped half-way (its time
    limit, a restart) keeps the rows it predicted."""
    predict_service.BUNDLES.clear()
    trace = demo_trace(tmp_path)
    store, (ident, version) = default_store(), store_key(trace)
    monkeypatch.setattr(warm, "MERGE_EVERY", 2)
    stored_when_asked: list[int] = []

    def progress(_: float) -> None:
        stored = store.load("rows", ident, version)
        stored_when_asked.append(0 if stored is None else int(stored["known"].sum()))

    done = warm.warm_rows(trace, progress=progress, chunk=40)
    assert stored_when_asked[:5] == [0, 0, 80, 80, 160]  # after every second chunk
    assert store.load("rows", ident, version)["known"].sum() == done > 160
