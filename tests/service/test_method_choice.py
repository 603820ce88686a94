"""The service's default answers: ``auto`` for waits and the runtime method chosen on the
tuning part, both named, with their accuracy on the most recent jobs; a ``method`` override."""

from __future__ import annotations

from pathlib import Path

import pytest

from predictor.core.runtime.choose import RUNTIME_CANDIDATES
from predictor.services import predict
from tests.core.wait_fakes import make_jobs
from tests.service.traces_support import api_for, make_user
from traces.core.swf import format_jobs
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


@pytest.fixture
def defaults(settings):
    """The service's own defaults (the suite's conftest swaps in a faster pair)."""
    del settings.QUEUECAST_SERVICE_WAIT_METHOD
    del settings.QUEUECAST_SERVICE_RUNTIME_METHOD
    predict.BUNDLES.clear()
    predict.OVERRIDES.clear()
    yield
    predict.BUNDLES.clear()
    predict.OVERRIDES.clear()


@pytest.fixture
def trace(tmp_path: Path):
    path = tmp_path / "small.swf"
    path.write_text("; MaxProcs: 128\n" + format_jobs(make_jobs(500)))
    return ingest_swf(path, name="small")


def body(trace, **extra):
    at = (trace.first_submit_s + trace.last_submit_s) * 0.7
    return {"user_id": 2, "queue_id": 1, "requested_procs": 8, "requested_time": 3600, "at": at,
            **extra}  # fmt: skip


def test_default_answer_is_auto_with_the_chosen_runtime_method_and_their_recent_accuracy(
    defaults, trace, monkeypatch
):
    assert predict.service_methods() == ("auto", "choose")
    client = api_for(make_user("alice"))
    res = client.post(f"/api/traces/{trace.pk}/predictions/wait", body(trace), format="json")
    assert res.status_code == 200, res.json()
    answer = res.json()
    assert answer["method"] == "auto" and answer["runtime_method"] in RUNTIME_CANDIDATES
    methods = answer["methods"]
    assert methods["wait"] == "auto" and methods["runtime"] == answer["runtime_method"]
    assert "coverage" in methods["runtime_reason"]
    assert "validation jobs" in methods["wait_reason"]  # auto's weight rule, chosen per site
    wait, runtime = answer["accuracy"]["wait"], answer["accuracy"]["runtime"]
    assert wait["jobs"] > 0 and wait["zero_aae_s"] > 0
    assert wait["better_than_zero"] == (wait["aae_s"] < wait["zero_aae_s"])
    assert 0 < runtime["jobs"] <= predict.RUNTIME_RECENT
    assert 0 <= runtime["success"] <= 1 and 0 <= runtime["requested_success"] <= 1
    # Fitted once per trace version: the next answers reuse the choice.
    monkeypatch.setattr(predict.BUNDLES, "fit", lambda t: pytest.fail("refitted"))
    again = client.post(f"/api/traces/{trace.pk}/predictions/runtime", body(trace), format="json")
    assert again.status_code == 200 and again.json()["method"] == answer["runtime_method"]
    assert again.json()["methods"]["runtime_reason"] == methods["runtime_reason"]


def test_method_override_answers_with_the_method_asked_for(defaults, trace):
    client = api_for(make_user("alice"))
    url = f"/api/traces/{trace.pk}/predictions"
    wait = client.post(f"{url}/wait", body(trace, method="median"), format="json")
    assert wait.status_code == 200 and wait.json()["method"] == "median"
    run = client.post(f"{url}/runtime", body(trace, method="rangeset"), format="json")
    assert run.status_code == 200 and run.json()["method"] == "rangeset"
    assert run.json()["methods"]["runtime_reason"] == "asked for"
    bad = client.post(f"{url}/wait", body(trace, method="magic"), format="json")
    assert bad.status_code == 400 and "method" in bad.json()


def test_the_wait_reason_says_which_rule_was_kept_and_by_how_much():
    from types import SimpleNamespace

    from predictor.services.method_reason import wait_reason

    assert wait_reason(SimpleNamespace()) is None and wait_reason(None) is None
    early = SimpleNamespace(rule_choice_={"rule": "adahedge", "reason": "no jobs yet"})
    assert wait_reason(early) == "AdaHedge weights over the methods (no jobs yet)"
    kept = SimpleNamespace(rule_choice_={
        "rule": "adahedge_stacked", "validation_jobs": 1000,
        "aae_s": {"adahedge": 7260.0, "adahedge_stacked": 3600.0}})  # fmt: skip
    text = wait_reason(kept)
    assert text.startswith("AdaHedge weights over the methods and their best mix, chosen here")
    assert "1,000 validation jobs" in text and "2 h 1 min" in text and "1 h" in text
