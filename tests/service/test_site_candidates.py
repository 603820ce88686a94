"""Which sizes molding tries at a live site: a user new to the site gets the size grid."""

from __future__ import annotations

import pytest

from tests.service.test_sites_support import (
    FakePredictor,
    api_for,
    job_body,
    make_user,
    simulated_site,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("config", "sizes"),
    [
        ({"speed": 1.0, "work_limit": 10.0}, [4, 8, 16, 32, 64]),
        # the default work limit (1): the grid's sizes that do no more work than 16 (Downey)
        ({"speed": 1.0}, [4, 8, 16]),
    ],
)
def test_a_user_without_history_at_the_site_gets_the_size_grid(monkeypatch, config, sizes) -> None:
    site = simulated_site(config=config)  # 64 processors; its history has numeric users only
    FakePredictor(wait_per_proc=500.0).install(monkeypatch)
    body = job_body(procs=16, allow_delay=False)
    job = api_for(make_user("newcomer")).post(f"/api/sites/{site.pk}/jobs/", body, format="json")
    assert job.status_code == 201, job.data
    molding = job.data["decision"]["molding"]
    assert [c["procs"] for c in molding["candidates"]] == sizes
    assert job.data["procs_chosen"] == 4  # waits grow with size here: the grid lets it choose
