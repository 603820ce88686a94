"""A job submitted as asked (``mold`` and ``allow_delay`` off) keeps its arrival-time
prediction (issue 19, item 5): its page shows the prediction's error once it has started,
as it does for a molded or held job."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client

from holdqueue.models import SiteJob
from holdqueue.pages_decision import start_check
from holdqueue.services import predict as site_predict
from holdqueue.services.errors import WrongState
from tests.service.test_sites_support import api_for, simulated_site

pytestmark = pytest.mark.django_db


def submit_as_asked(site, user) -> dict:
    body = {"procs": 16, "time_limit_s": 600, "command": "sleep 1", "name": "as-asked",
            "mold": False, "allow_delay": False}  # fmt: skip
    response = api_for(user).post(f"/api/sites/{site.pk}/jobs/", body, format="json")
    assert response.status_code == 201, response.data
    return response.data


def test_a_job_submitted_as_asked_stores_its_prediction_and_its_page_shows_the_error(alice):
    site = simulated_site()
    data = submit_as_asked(site, alice)
    record = data["decision"]
    assert record["molding"] is None and record["delay"] is None
    prediction = record["prediction"]
    assert prediction["procs"] == 16 and prediction["wait_s"] >= 0.0
    assert prediction["runtime_s"] > 0.0
    assert prediction["response_s"] == pytest.approx(prediction["wait_s"] + prediction["runtime_s"])

    job = SiteJob.objects.get(pk=data["id"])
    assert start_check(job) is None  # not started yet: no error to show
    predicted = job.arrived_at + dt.timedelta(seconds=prediction["wait_s"])
    job.started_at = predicted + dt.timedelta(seconds=125)
    job.save(update_fields=["started_at"])
    check = start_check(job)
    assert check["predicted"] == predicted and check["error_s"] == pytest.approx(125.0)
    client = Client()
    client.force_login(alice)
    page = client.get(f"/sites/{site.pk}/jobs/{job.pk}/").content.decode()
    assert 'id="start-check"' in page and "125 s later than predicted" in page
    # early: the page says by how much, without a minus sign ("-742 s earlier", seen by hand)
    job.started_at = predicted - dt.timedelta(seconds=742)
    job.save(update_fields=["started_at"])
    assert start_check(job)["error_s"] == pytest.approx(-742.0)
    page = client.get(f"/sites/{site.pk}/jobs/{job.pk}/").content.decode()
    assert "742 s earlier than predicted" in page and "-742" not in page


def test_a_site_that_cannot_predict_yet_still_takes_the_job_without_a_prediction(
    alice, monkeypatch
):
    site = simulated_site()

    def no_history(site, history=None):
        raise WrongState("site has 3 finished jobs in its history", field="history")

    monkeypatch.setattr(site_predict, "site_answers", no_history)
    data = submit_as_asked(site, alice)
    assert data["decision"]["prediction"] is None
    assert start_check(SiteJob.objects.get(pk=data["id"])) is None
