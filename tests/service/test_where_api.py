"""POST /api/predict/: one request answered at every site (and trace, on request), sorted by
predicted finish, each with its method, accuracy and why; places that cannot answer are
listed with their reason."""

from __future__ import annotations

import pytest

from holdqueue.services import predict as site_predict
from predictor.services import predict as predict_service
from tests.service.test_sites_support import api_for, make_user, simulated_site

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_models():
    site_predict._MODELS.clear()
    predict_service.BUNDLES.clear()
    yield
    site_predict._MODELS.clear()


def ask(who, **body):
    return api_for(who).post("/api/predict/", {"procs": 8, "time_limit_s": 3600, **body},
                              format="json")  # fmt: skip


def test_every_site_and_the_traces_asked_for_answer_sorted_by_predicted_finish():
    fast, cold = simulated_site("fast"), simulated_site("cold", warm_up=False)
    res = ask(make_user("alice"), traces=True)
    assert res.status_code == 200, res.data
    body = res.data
    names = [(a["kind"], a["name"]) for a in body["answers"]]
    assert ("site", fast.name) in names and ("trace", fast.trace.name) in names
    ends = [a["predicted_end_s"] for a in body["answers"]]
    assert ends == sorted(ends)
    for a in body["answers"]:
        assert a["method"]["wait"] and a["method"]["runtime"]
        assert a["predicted_start_s"] <= a["predicted_end_s"]
        assert a["interval"]["low_s"] <= a["interval"]["high_s"]
        assert a["accuracy"]["wait"]["jobs"] > 0 and a["why"]["reason"]
        assert "better_than_zero" in a["accuracy"]["wait"] and "success" in a["accuracy"]["runtime"]
    site = next(a for a in body["answers"] if a["kind"] == "site")
    assert site["predicted_start"] is not None and site["queue_read_at"] is not None
    trace = next(a for a in body["answers"] if a["kind"] == "trace")
    assert trace["queue_read_at"] is None
    skipped = {s["name"]: s["reason"] for s in body["skipped"]}
    assert cold.name in skipped and "history" in skipped[cold.name]


def test_traces_only_on_request_and_by_id():
    site = simulated_site("fast")
    alice = make_user("alice")
    assert {a["kind"] for a in ask(alice).data["answers"]} == {"site"}
    by_id = ask(alice, traces=[site.trace.pk]).data["answers"]
    assert [a["name"] for a in by_id if a["kind"] == "trace"] == [site.trace.name]
    bad = ask(alice, traces=[999_999])
    assert bad.status_code == 400 and "999999" in str(bad.data) and "traces" in str(bad.data)
    assert ask(alice, traces="all").status_code == 400


def test_a_site_too_small_for_the_job_is_skipped_with_its_size():
    site = simulated_site("fast")
    res = ask(make_user("alice"), procs=site.machine_procs + 1)
    assert res.status_code == 200 and res.data["answers"] == []
    assert f"has {site.machine_procs} processors" in res.data["skipped"][0]["reason"]


def test_needs_login_and_asks_only_for_yourself():
    assert api_for(None).post("/api/predict/", {"procs": 8, "time_limit_s": 60}).status_code in (
        401,
        403,
    )
    res = ask(make_user("alice"), user="bob")
    assert res.status_code == 400 and "user" in res.data
    assert ask(make_user("root", staff=True), user="bob").status_code == 200


def test_bad_fields_are_named():
    res = api_for(make_user("alice")).post("/api/predict/", {"procs": 0}, format="json")
    assert res.status_code == 400 and {"procs", "time_limit_s"} <= set(res.data)


def test_where_page_form_takes_2h_and_shows_the_places_sorted_with_units_and_terms():
    from django.test import Client

    simulated_site("fast")
    browser = Client()
    browser.force_login(make_user("alice"))
    empty = browser.get("/where/").content.decode()
    assert 'id="where-form"' in empty and 'href="/where/"' in empty  # in the menu
    page = browser.get("/where/", {"procs": 8, "time_limit": "2h", "traces": "on",
                                   "confidence": 0.9}).content.decode()  # fmt: skip
    assert 'id="where-table"' in page and "finishes first" in page
    assert "8 processors for 2 h" in page
    assert 'href="/glossary/#why-it-waits"' in page and 'href="/glossary/#wait-interval"' in page
    assert page.index(">fast</a>") > 0 and "(90%)" in page
    assert 'href="/glossary/#told-accuracy"' not in page  # no told job has started


def test_a_site_s_told_accuracy_is_in_its_answer_and_row() -> None:
    import datetime as dt

    from django.test import Client
    from django.utils import timezone

    from holdqueue.models import SiteJob
    from holdqueue.services import told as site_told

    site_told._TOLD.clear()
    site, owner = simulated_site("fast"), make_user("alice")
    base = timezone.now() - dt.timedelta(days=1)
    for k in range(30):  # told 100 s; waited 400 s
        at = base + dt.timedelta(seconds=600 * k)
        SiteJob.objects.create(
            site=site, owner=owner, script="#!/bin/sh\n", procs_requested=4, procs_chosen=4,
            time_limit_s=600, state=SiteJob.FINISHED, arrived_at=at, submitted_at=at,
            backend_job_id=f"w{k}", started_at=at + dt.timedelta(seconds=400),
            decision={"told": {"history_s": 100.0, "queue_s": 100.0, "runtime_s": 60.0}},
        )  # fmt: skip
    answer = next(a for a in ask(owner).data["answers"] if a["kind"] == "site")
    told = answer["accuracy"]["told"]
    assert told["jobs"] == 30 and told["mae_s"] == pytest.approx(300.0)
    browser = Client()
    browser.force_login(owner)
    page = browser.get("/where/", {"procs": 8, "time_limit": "1h", "confidence": 0.9})
    text = page.content.decode()
    assert 'href="/glossary/#told-accuracy"' in text
    assert "5 min over 30 started; 100% waited longer" in text
    bad = browser.get("/where/", {"procs": 8, "time_limit": "soon", "confidence": 0.9})
    assert 'id="where-table"' not in bad.content.decode() and "errorlist" in bad.content.decode()
