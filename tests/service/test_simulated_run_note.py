"""A simulated site says what a submitted job does there: the command is not run and the job
holds its processors for ``runtime_fraction`` of its limit (``backends.run_note``,
``simulated_hold_s``), on the site page, the job page and in the API; a Slurm site says
nothing of the kind."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client

from holdqueue.models import Site
from holdqueue.serializers import SiteSerializer
from holdqueue.services import backends
from tests.service.test_sites_support import FakePredictor, api_for, simulated_site

pytestmark = pytest.mark.django_db


def page_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_simulated_site_says_the_command_is_not_run_and_how_long_a_job_holds(
    alice, monkeypatch
) -> None:
    site = simulated_site(speed=2.0, config={"speed": 2.0, "runtime_fraction": 0.25})
    assert "command is not run" in backends.run_note(site)
    assert "25% of its time limit" in backends.run_note(site)
    assert "2 times real time" in backends.run_note(site)
    # 0.25 of 4,000 s on the site's clock, at 2 site seconds per wall second
    assert backends.simulated_hold_s(site, 4000.0) == pytest.approx(500.0)
    assert api_for(alice).get(f"/api/sites/{site.pk}/").data["run_note"] == backends.run_note(site)
    page = page_for(alice).get(f"/sites/{site.pk}/").content.decode()
    assert 'id="run-note"' in page and "Run through a shell" not in page

    FakePredictor(now_wait_s=0.0, future_wait_s=0.0, wait_per_proc=0.0).install(monkeypatch)
    body = {"procs": 4, "time_limit_s": 4000, "command": "sleep 1", "mold": False,
            "allow_delay": False}  # fmt: skip
    job = api_for(alice).post(f"/api/sites/{site.pk}/jobs/", body, format="json").data
    assert job["simulated_hold_s"] == pytest.approx(500.0)
    listed = api_for(alice).get(f"/api/sites/{site.pk}/jobs/").data["results"]
    assert [j["simulated_hold_s"] for j in listed] == [pytest.approx(500.0)]
    page = page_for(alice).get(f"/sites/{site.pk}/jobs/{job['id']}/").content.decode()
    assert 'id="simulated-hold"' in page and "8 min 20 s" in page


def test_slurm_site_has_no_run_note(alice) -> None:
    site = Site.objects.create(
        name="real", backend="slurm", machine_procs=8, epoch=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    )
    assert backends.run_note(site) == "" and backends.simulated_hold_s(site, 600.0) is None
    assert SiteSerializer(site).data["run_note"] == ""  # (its API answer is 503: no Slurm here)
    page = page_for(alice).get(f"/sites/{site.pk}/").content.decode()
    assert 'id="run-note"' not in page and "Run through a shell" in page
