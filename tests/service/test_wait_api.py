"""Wait prediction API and evaluation runs over HTTP: answers, validation, access, 202 runs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from predictor.models import EvaluationRun
from predictor.services import predict as predict_service
from predictor.services import warm as warm_service
from tests.core.wait_fakes import make_jobs
from tests.service.traces_support import api_for, demo_trace, make_user
from traces.core.swf import format_jobs
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


@pytest.fixture
def trace(tmp_path: Path):
    predict_service.BUNDLES.clear()
    return demo_trace(tmp_path)


def job(trace, **changes):
    body = {
        "user_id": 2, "group_id": 1, "queue_id": 1, "requested_procs": 8,
        "requested_time": 3600.0, "at": (trace.first_submit_s + trace.last_submit_s) / 2,
    }  # fmt: skip
    return {**body, **changes}


def predict(client, trace_id, body):
    return client.post(f"/api/traces/{trace_id}/predictions/wait", body, format="json")


def test_prediction_answers_apq_with_the_qbets_bound_beside_it(trace, alice):
    res = predict(api_for(alice), trace.pk, job(trace))
    assert res.status_code == 200, res.json()
    body = res.json()
    assert {"wait_s", "method", "predictor", "support", "qbets_upper_s", "at"} <= set(body)
    assert body["wait_s"] >= 0 and body["predictor"] and body["support"] >= 0
    assert body["method"] == "apq" and body["qbets_upper_s"] >= 0


def test_answer_carries_an_interval_p_within_and_the_recent_accuracy(trace, alice):
    client = api_for(alice)
    narrow = predict(client, trace.pk, job(trace, confidence=0.5, within_s=3600.0)).json()
    wide = predict(client, trace.pk, job(trace, confidence=0.99)).json()
    assert narrow["confidence"] == 0.5 and narrow["recent_jobs"] > 0
    assert 0 <= narrow["interval_low_s"] <= narrow["interval_high_s"]
    assert wide["interval_high_s"] - wide["interval_low_s"] >= (
        narrow["interval_high_s"] - narrow["interval_low_s"]
    )
    assert 0.0 <= narrow["p_within"] <= 1.0 and wide["p_within"] is None
    assert 0 < narrow["p_within_jobs"] <= 200 and wide["p_within_jobs"] == 0
    assert narrow["recent_aae_s"] >= 0 and narrow["recent_mean_wait_s"] > 0
    res = predict(client, trace.pk, job(trace, confidence=0.995))
    assert res.status_code == 400 and "confidence" in res.json()


def test_wait_and_runtime_predictions_share_one_fitted_bundle(trace, alice, monkeypatch):
    client = api_for(alice)
    predict(client, trace.pk, job(trace))
    calls = []
    monkeypatch.setattr(predict_service.BUNDLES, "fit", lambda t: calls.append(t))
    res = predict(client, trace.pk, job(trace, user_id=3))
    assert res.status_code == 200 and calls == []
    url = f"/api/traces/{trace.pk}/predictions/runtime"
    assert client.post(url, job(trace), format="json").status_code == 200 and calls == []


def test_a_wait_answer_is_the_full_answers_wait_and_never_asks_the_requests_runtime(
    trace, alice, monkeypatch
):
    """The body shows no runtime of the request, so its runtime rangeSet is not computed
    (the why block asks only about queued jobs without a limit); the wait is unchanged."""
    client = api_for(alice)
    body = job(trace, user_id=3, requested_procs=16)
    predict(client, trace.pk, body)
    bundle = predict_service.bundle_for(trace)
    asked: list = []
    kind = type(bundle.runtime)
    real = kind.predict
    monkeypatch.setattr(kind, "predict", lambda m, s, b: (asked.append(b), real(m, s, b))[1])
    got = predict(client, trace.pk, body).json()
    mine = [b for b in asked if ((b.submit_s == body["at"]) & (b.procs == 16)).any()]
    assert mine == []
    request = predict_service.request_of(bundle, body)
    full = predict_service.predict_requests(bundle, bundle.snapshot(body["at"]), [request])[0]
    assert asked and got["wait_s"] == full.wait_s and got["predictor"] == full.wait_predictor
    assert (got["support"], got["qbets_upper_s"]) == (full.wait_support, full.wait_upper_s)


def test_a_changed_trace_is_fitted_again(trace, alice):
    client = api_for(alice)
    predict(client, trace.pk, job(trace))
    first = predict_service.bundle_for(trace)
    trace.finished_at = trace.finished_at + dt.timedelta(seconds=1)  # re-ingested
    trace.save(update_fields=["finished_at"])
    assert predict_service.bundle_for(trace) is not first
    assert predict_service.bundle_for(trace) is predict_service.bundle_for(trace)


def test_both_prediction_posts_answer_200_in_the_schema(alice):
    paths = api_for(alice).get("/api/schema/", {"format": "json"}).json()["paths"]
    for kind in ("wait", "runtime"):
        post = paths[f"/api/traces/{{trace_pk}}/predictions/{kind}/"]["post"]
        success = {code for code in post["responses"] if code.startswith("2")}
        assert success == {"200"}, kind  # errors are documented too (queuecast/schema.py)


def test_unknown_trace_is_404(alice):
    assert predict(api_for(alice), 9999, {"user_id": 1}).status_code == 404


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"requested_procs": 129}, "requested_procs"),
        ({"requested_procs": 0}, "requested_procs"),
        ({"requested_time": -5}, "requested_time"),
        ({"at": -1}, "at"),
        ({"at": 1e12}, "at"),
        ({"user_id": "x"}, "user_id"),
    ],
)
def test_bad_input_is_400_naming_the_field(trace, alice, change, field):
    res = predict(api_for(alice), trace.pk, job(trace, **change))
    assert res.status_code == 400
    assert field in res.json()


def test_prediction_needs_a_login(trace):
    assert predict(api_for(None), trace.pk, job(trace)).status_code in (401, 403)


def test_posting_an_evaluation_answers_202_and_runs_it(
    trace, alice, django_capture_on_commit_callbacks
):
    client = api_for(alice)
    body = {"kind": "wait", "methods": ["qbets", "median"], "limit": 50}
    with django_capture_on_commit_callbacks(execute=True):
        res = client.post(f"/api/traces/{trace.pk}/evaluations/", body, format="json")
    assert res.status_code == 202 and res["Location"].rstrip("/").endswith(
        f"/api/evaluations/{res.json()['id']}"
    )
    detail = client.get(res["Location"]).json()
    assert detail["status"] == "done" and detail["progress"] == 1.0
    assert set(detail["result"]) == {"qbets", "median"}
    assert detail["result"]["qbets"]["jobs"] == 50


@pytest.mark.parametrize("kind", ["wait", "runtime"])
def test_evaluation_with_an_unknown_method_is_400(trace, alice, kind):
    body = {"kind": kind, "methods": ["oracle"]}
    res = api_for(alice).post(f"/api/traces/{trace.pk}/evaluations/", body, format="json")
    assert res.status_code == 400 and res.json()["field"] == "methods"
    assert "oracle" in res.json()["detail"]
    assert not EvaluationRun.objects.exists()


def test_runtime_evaluations_go_to_the_runtime_service(
    trace, alice, monkeypatch, django_capture_on_commit_callbacks
):
    import predictor.services.runtime as runtime

    seen = []
    monkeypatch.setattr(
        runtime, "run_runtime_evaluation", lambda rid, progress: seen.append(rid) or {"x": {}}
    )
    with django_capture_on_commit_callbacks(execute=True):
        res = api_for(alice).post(
            f"/api/traces/{trace.pk}/evaluations/", {"kind": "runtime"}, format="json"
        )
    assert res.status_code == 202 and seen == [res.json()["id"]]
    assert EvaluationRun.objects.get().status == "done"


def test_users_see_their_own_runs_and_staff_see_all(trace, alice):
    bob, staff = make_user("bob"), make_user("root", staff=True)
    mine = EvaluationRun.objects.create(kind="wait", owner=alice, trace=trace)
    EvaluationRun.objects.create(kind="runtime", owner=bob, trace=trace)
    assert [r["id"] for r in api_for(alice).get("/api/evaluations/").json()["results"]] == [mine.pk]
    assert api_for(bob).get(f"/api/evaluations/{mine.pk}/").status_code == 404
    assert len(api_for(staff).get("/api/evaluations/").json()["results"]) == 2
    only_wait = api_for(staff).get("/api/evaluations/?kind=wait").json()["results"]
    assert [r["kind"] for r in only_wait] == ["wait"]


def test_trace_without_any_known_wait_is_a_409_saying_why(tmp_path, alice):
    jobs = make_jobs(200)
    jobs["wait_time"] = -1.0
    path = tmp_path / "nowaits.swf"
    path.write_text("; MaxProcs: 128\n" + format_jobs(jobs))
    stored = ingest_swf(path, name="nowaits")
    res = predict(api_for(alice), stored.pk, job(stored))
    assert res.status_code == 409
    assert "no known waits" in res.json()["detail"]


def test_a_query_without_queue_uses_the_traces_only_queue(trace, alice):
    client = api_for(alice)
    body = job(trace)
    given = predict(client, trace.pk, body).json()
    body.pop("queue_id")
    omitted = predict(client, trace.pk, body).json()
    assert omitted["support"] == given["support"] > 0
    assert omitted["wait_s"] == given["wait_s"]


def test_a_queue_the_trace_does_not_have_is_a_400_naming_queue_id(trace, alice):
    res = predict(api_for(alice), trace.pk, job(trace, queue_id=7))
    assert res.status_code == 400 and res.json()["field"] == "queue_id"


def test_stored_row_predictions_make_any_instant_warm_in_a_new_process(
    trace, alice, settings, tmp_path, monkeypatch
):
    settings.QUEUECAST_FITTED_DIR = str(tmp_path / "fitted")
    client = api_for(alice)
    cold = predict(client, trace.pk, job(trace)).json()
    assert warm_service.warm_rows(trace) > 0
    assert warm_service.warm_runtime_rows(trace) > 0
    predict_service.BUNDLES.clear()  # as a fresh process: bundle and rows from the store
    bundle = predict_service.bundle_for(trace)
    assert "_recent_scorer" not in vars(bundle)

    def no_rows(rows, progress=None):
        raise AssertionError(f"predicted {len(rows)} rows again")

    monkeypatch.setattr(bundle.wait, "predict_rows", no_rows)
    monkeypatch.setattr(bundle.runtime, "predict_rows", no_rows)  # its accuracy's jobs too
    for at in (trace.first_submit_s + 10.0, job(trace)["at"], trace.last_submit_s):
        res = predict(client, trace.pk, job(trace, at=at))
        assert res.status_code == 200, res.json()
    warm = predict(client, trace.pk, job(trace)).json()
    assert warm["recent_aae_s"] == cold["recent_aae_s"]
    assert warm["interval_high_s"] == cold["interval_high_s"]
    assert warm["accuracy"]["runtime"] == cold["accuracy"]["runtime"]


def test_the_interval_is_the_evaluation_s_online_local_rule_at_the_instant(trace, alice):
    """The answer's interval is the online rule's at ``at`` (``RecentScorer.adaptive``: the
    last jobs started by then replayed, each at its own arrival; the errors of the 200 of them
    predicted nearest), not split conformal over the 300 recent errors alone (which the
    recent accuracy still reads)."""
    from predictor.core.wait.local_interval import local_now
    from predictor.core.wait.recent import recent_rows

    body = job(trace, confidence=0.8)
    res = predict(api_for(alice), trace.pk, body).json()
    bundle = predict_service.bundle_for(trace)
    jobs, at = bundle.jobs, float(body["at"])
    n_before = int((jobs["submit_time"].to_numpy() <= at).sum())
    rows = recent_rows(jobs, at, n_before, n=2000)
    wait, arrival = jobs["wait_time"].to_numpy()[rows], jobs["submit_time"].to_numpy()[rows]
    pred = bundle.wait.predict_rows(rows).wait_s
    state = local_now(pred, wait, arrival, arrival + wait, at, 0.8)
    assert state is not None
    low, high = state.interval(np.array([res["wait_s"]]))
    assert (res["interval_low_s"], res["interval_high_s"]) == (low[0], high[0])
    assert res["interval_jobs"] == state.known and res["interval_level_used"] == state.target
