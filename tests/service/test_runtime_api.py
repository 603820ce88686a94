"""Runtime prediction API: rangeSets, load functions, validation errors and auth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from predictor.services import predict
from tests.service.traces_support import api_for, make_user
from traces.models import Trace
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


def write_synthetic_swf(path: Path, n_jobs: int = 300, seed: int = 0) -> Path:
    """A 64-processor trace: 4 users, sizes 1-8, runtimes that depend on user and size."""
    rng = np.random.default_rng(seed)
    lines = ["; Version: 2.2", "; MaxProcs: 64", f"; MaxJobs: {n_jobs}"]
    t = 0
    for i in range(n_jobs):
        t += int(rng.integers(60, 900))
        user = int(rng.integers(1, 5))
        size = int(2 ** rng.integers(0, 4))
        run = int(100 * user * size * rng.uniform(0.8, 1.2)) + int(rng.integers(0, 3))
        req = max(run * 2, 600)
        fields = [
            i + 1,
            t,
            int(rng.integers(0, 300)),
            run,
            size,
            -1,
            -1,
            size,
            req,
            -1,
            1,
            user,
            1,
            -1,
            1,
            -1,
            -1,
            -1,
        ]
        lines.append(" ".join(str(v) for v in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def trace(alice, tmp_path, settings) -> Trace:
    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path / "uploads")
    predict.BUNDLES.clear()
    return ingest_swf(write_synthetic_swf(tmp_path / "synthetic.swf"), name="synth", owner=alice)


def url(trace_id: int) -> str:
    return f"/api/traces/{trace_id}/predictions/runtime"


def query(trace: Trace, **changes) -> dict:
    body = {
        "user_id": 2,
        "group_id": 1,
        "queue_id": 1,
        "requested_procs": 2,
        "requested_time": 3600,
        "at": trace.last_submit_s,
    }
    return {**body, **changes}


def test_prediction_answers_a_rangeset_with_probabilities(trace, alice) -> None:
    response = api_for(alice).post(url(trace.pk), query(trace), format="json")
    assert response.status_code == 200, response.data
    body = response.data
    assert body["level"] == "tuple" and body["support"] >= 10
    probs = [r["probability"] for r in body["ranges"]]
    assert sum(probs) == pytest.approx(1.0)
    lows = [r["low_s"] for r in body["ranges"]]
    assert lows == sorted(lows) and all(r["high_s"] <= 3600 for r in body["ranges"])
    # User 2 with 2 procs runs about 400 s: the point lies near it.
    assert 250 < body["point_s"] < 600


def test_each_size_and_user_gets_its_own_rangeset(trace, alice) -> None:
    client = api_for(alice)
    answers = {
        (user, procs): client.post(
            url(trace.pk), query(trace, user_id=user, requested_procs=procs), format="json"
        ).data
        for user in (1, 3)
        for procs in (1, 2, 4, 8)
    }
    assert {a["level"] for a in answers.values()} == {"tuple"}
    points = [a["point_s"] for a in answers.values()]
    assert len(set(points)) == len(points)  # runtime grows with user and size in this log
    assert answers[(3, 8)]["point_s"] > 5 * answers[(1, 1)]["point_s"]


def test_a_size_the_user_never_ran_says_which_history_answered(trace, alice) -> None:
    response = api_for(alice).post(url(trace.pk), query(trace, requested_procs=64), format="json")
    assert response.status_code == 200 and response.data["level"] == "user"


def test_without_queue_the_traces_only_queue_is_used(trace, alice) -> None:
    body = query(trace)
    del body["queue_id"]
    response = api_for(alice).post(url(trace.pk), body, format="json")
    assert response.status_code == 200 and response.data["level"] == "tuple"


def test_unknown_tuple_falls_back_and_says_so(trace, alice) -> None:
    response = api_for(alice).post(url(trace.pk), query(trace, user_id=77), format="json")
    assert response.status_code == 200
    assert response.data["level"] == "size"


def test_unknown_trace_is_404(alice) -> None:
    response = api_for(alice).post(url(9999), {"user_id": 1}, format="json")
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("requested_procs", 65),
        ("requested_time", -5),
        ("at", -1.0),
        ("at", 10**9),
        ("requested_procs", 0),
    ],
)
def test_bad_fields_are_400_naming_the_field(trace, alice, field, value) -> None:
    response = api_for(alice).post(url(trace.pk), query(trace, **{field: value}), format="json")
    assert response.status_code == 400
    assert field in response.data


def test_prediction_needs_a_logged_in_user(trace) -> None:
    response = api_for(None).post(url(trace.pk), query(trace), format="json")
    assert response.status_code in (401, 403)


def test_any_logged_in_user_may_predict_on_someone_elses_trace(trace) -> None:
    bob = make_user("bob")
    assert api_for(bob).post(url(trace.pk), query(trace), format="json").status_code == 200


def test_load_functions_are_listed_with_their_chains(trace, alice) -> None:
    response = api_for(alice).get(f"/api/traces/{trace.pk}/load-functions")
    assert response.status_code == 200
    body = response.data
    assert body["tune_jobs"] == 60
    for fn in body["functions"]:
        assert set(fn["tuple"]) == {"user_id", "requested_procs", "queue_id", "group_id"}
        assert len(fn["chain"]) >= 2
        loads = [p["load"] for p in fn["chain"]]
        assert loads == sorted(loads)


def test_load_functions_of_unknown_trace_is_404(alice) -> None:
    assert api_for(alice).get("/api/traces/9999/load-functions").status_code == 404


def test_predictions_are_in_the_schema(alice) -> None:
    schema = api_for(alice).get("/api/schema/", {"format": "json"})
    assert schema.status_code == 200
    paths = schema.json()["paths"] if hasattr(schema, "json") else schema.data["paths"]
    assert any(
        p.endswith("/predictions/runtime/") or p.endswith("/predictions/runtime") for p in paths
    )
