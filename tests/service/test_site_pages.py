"""Live-site pages: the site with its queue and submit form, a held job with its decision
and release/cancel, the hold queue, and the predict page asking a live site."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.service.test_sites_support import FakePredictor, api_for, make_user, simulated_site

pytestmark = pytest.mark.django_db


@pytest.fixture
def site():
    return simulated_site()


def page_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def held_job(site, user, monkeypatch):
    FakePredictor(now_wait_s=50_000.0, future_wait_s=0.0, wait_per_proc=10.0).install(monkeypatch)
    body = {"procs": 16, "time_limit_s": 600, "command": "sleep 1", "name": "held-one",
            "candidates": [8]}  # fmt: skip
    response = api_for(user).post(f"/api/sites/{site.pk}/jobs/", body, format="json")
    assert response.status_code == 201, response.data
    return response.data


def held_job_page(site, user, monkeypatch) -> tuple[dict, str]:
    """A held job of ``user`` and its page as the owner sees it."""
    job = held_job(site, user, monkeypatch)
    return job, page_for(user).get(f"/sites/{site.pk}/jobs/{job['id']}/").content.decode()


def test_site_page_shows_the_live_status_and_submits_through_the_api(site, alice) -> None:
    page = page_for(alice).get(f"/sites/{site.pk}/").content.decode()
    assert 'id="site-status"' in page and "Live queue" in page
    assert f'data-api-url="/api/sites/{site.pk}/jobs"' in page
    assert f'data-next-url="/sites/{site.pk}/jobs/{{id}}/"' in page
    assert site.name in page_for(alice).get("/sites/").content.decode()


def test_held_job_page_marks_the_chosen_size_and_offers_release_and_cancel(
    site, alice, monkeypatch
) -> None:
    job, page = held_job_page(site, alice, monkeypatch)
    assert "held by Queuecast until" in page and 'id="release-job"' in page
    chosen = [
        c for c in job["decision"]["molding"]["candidates"] if c["procs"] == job["procs_chosen"]
    ]
    assert len(chosen) == 1 and 'class="chosen"' in page
    assert page.count('class="chosen"') == 1
    # the decision as sentences: the size among the sizes tried, and why it is held
    assert "Of the 2 sizes tried (8 and 16 processors)" in page
    assert "more than the 30% the rule asks for, so it is held until" in page
    assert f'data-api-post="/api/sites/{site.pk}/jobs/{job["id"]}/release"' in page


def test_hold_queue_page_lists_held_jobs_with_actions_only_for_their_owner(
    site, alice, monkeypatch
) -> None:
    job = held_job(site, alice, monkeypatch)
    mine = page_for(alice).get(f"/sites/{site.pk}/holdqueue/").content.decode()
    assert "held-one" in mine and f"/api/sites/{site.pk}/jobs/{job['id']}/cancel" in mine
    other = page_for(make_user("bob")).get(f"/sites/{site.pk}/holdqueue/").content.decode()
    assert "held-one" not in other and "alice" not in other and "/cancel" not in other
    assert (
        page_for(make_user("carol")).get(f"/sites/{site.pk}/jobs/{job['id']}/").status_code == 404
    )


def test_predict_page_answers_for_a_live_site_with_the_calibrated_interval(site, alice) -> None:
    query = {"site": site.pk, "procs": 8, "time_limit": "1h", "user_id": -1, "confidence": 0.8}
    page = page_for(alice).get("/predict/", query).content.decode()
    assert f"Answer for {site.name} (live)" in page
    assert "Wait interval</a> (80%)" in page
    # where it was learnt: no job told by the site has started yet, so the fit's pool
    assert "calibrated on the errors of the last 200 finished jobs scored at the last fit" in page
    assert 'id="rangeset-spec"' in page
    # which rule made the wait shown, and why, linked to its glossary entry
    assert 'id="headline-rule"' in page and 'href="/glossary/#headline-rule"' in page
    assert "finished jobs, each answered again from the state at its arrival" in page


def test_predict_page_says_how_far_off_the_waits_the_site_told_were(site, alice) -> None:
    import datetime as dt

    from django.utils import timezone

    from holdqueue.models import SiteJob
    from holdqueue.services import queue_view
    from holdqueue.services import told as site_told

    site_told._TOLD.clear()
    query = {"site": site.pk, "procs": 8, "time_limit": "1h", "user_id": -1, "confidence": 0.9}
    before = page_for(alice).get("/predict/", query).content.decode()
    assert 'id="told-accuracy"' not in before  # no told job has started
    base = timezone.now() - dt.timedelta(days=1)
    for k in range(40):  # told 100 s; waited 60 s, or 400 s for one job in four
        at = base + dt.timedelta(seconds=600 * k)
        SiteJob.objects.create(
            site=site, owner=alice, script="#!/bin/sh\n", procs_requested=4, procs_chosen=4,
            time_limit_s=600, state=SiteJob.FINISHED, arrived_at=at, submitted_at=at,
            backend_job_id=f"p{k}", started_at=at + dt.timedelta(seconds=60 + 340 * (k % 4 == 3)),
            decision={"told": {"history_s": 100.0, "queue_s": 100.0, "runtime_s": 60.0}},
        )  # fmt: skip
    queue_view.changed(site)
    page = page_for(alice).get("/predict/", {**query, "within": "2min"}).content.decode()
    assert 'href="/glossary/#told-accuracy"' in page
    # told 100 s each: the 40 are equally near, 30 of them started within 2 min
    card = page.split('id="card-within"')[1].split("</div></div>")[0]
    assert "Chance to start</a> within 2 min" in card and '<div class="big">75%</div>' in card
    assert "of the last 40 jobs submitted through it that have started" in page
    assert "was off by 1 min 45 s on average (40 s for the middle one)" in page
    assert "25% waited longer than they were told" in page


def test_predict_page_says_why_a_new_site_gives_no_chance_to_start_within(site, alice) -> None:
    query = {"site": site.pk, "procs": 8, "time_limit": "1h", "user_id": -1, "confidence": 0.9,
             "within": "2h"}  # fmt: skip
    page = page_for(alice).get("/predict/", query).content.decode()
    assert 'id="answer"' in page and 'id="card-within"' in page and "within 2 h" in page
    assert "Not answered yet: fewer than 30 jobs told by this site have started." in page


def test_predict_page_needs_exactly_one_of_site_and_trace(site, alice) -> None:
    page = page_for(alice).get("/predict/", {"procs": 8, "time_limit": "1h", "user_id": -1,
                                             "confidence": 0.9}).content.decode()  # fmt: skip
    assert "pick either a live site or a trace" in page


def test_held_job_page_says_it_waits_for_its_hold_and_what_releasing_it_now_gives(
    site, alice, monkeypatch
) -> None:
    job, page = held_job_page(site, alice, monkeypatch)
    assert 'id="why"' in page and "It is held by the hold queue for" in page
    assert "Released now instead, it would start" in page
    assert 'href="/glossary/#why-it-waits"' in page


def test_a_started_job_page_shows_the_error_of_its_arrival_time_start_prediction(
    site, alice, monkeypatch
) -> None:
    import datetime as dt

    from holdqueue.models import SiteJob

    FakePredictor(now_wait_s=120.0).install(monkeypatch)
    body = {"procs": 8, "time_limit_s": 600, "command": "sleep 1", "allow_delay": False}
    job = api_for(alice).post(f"/api/sites/{site.pk}/jobs/", body, format="json").data
    row = SiteJob.objects.get(pk=job["id"])
    page = page_for(alice).get(f"/sites/{site.pk}/jobs/{row.pk}/").content.decode()
    assert 'id="start-check"' not in page  # not started: nothing to compare yet
    predicted_wait = [c for c in job["decision"]["molding"]["candidates"]
                      if c["procs"] == row.procs_chosen][0]["wait_s"]  # fmt: skip
    started = row.arrived_at + dt.timedelta(seconds=predicted_wait + 300)
    SiteJob.objects.filter(pk=row.pk).update(started_at=started)
    page = page_for(alice).get(f"/sites/{site.pk}/jobs/{row.pk}/").content.decode()
    assert 'id="start-check"' in page and "300 s later than predicted" in page


def test_job_api_gives_a_held_job_the_same_why_block_as_its_page(site, alice, monkeypatch) -> None:
    job = held_job(site, alice, monkeypatch)
    body = api_for(alice).get(f"/api/sites/{site.pk}/jobs/{job['id']}/").data
    assert body["state"] == "held"
    assert body["why"]["reason"] == "hold"
    assert "It is held by the hold queue for" in body["why"]["sentence"]
    assert "Released now instead, it would start" in body["why"]["sooner"]["sentence"]
