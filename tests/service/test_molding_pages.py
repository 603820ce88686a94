"""The molding run page: strategies side by side, change vs baseline, the four charts."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from jobmolding.models import MoldingRun
from queuecast.longrun import Status
from tests.service.traces_support import make_user

pytestmark = pytest.mark.django_db


def figures(response_s: float, **extra: float) -> dict:
    by_class = {
        "< 1": {"jobs": 3, "mean_response_s": response_s, "mean_wait_s": 60.0},
        ">= 1": {"jobs": 1, "mean_response_s": 2 * response_s, "mean_wait_s": 600.0},
    }
    return {
        "jobs": 4,
        "mean_wait_s": 600.0,
        "mean_run_s": 3600.0,
        "mean_response_s": response_s,
        "median_response_s": response_s,
        "mean_bounded_slowdown": 1.5,
        "utilisation": 0.6,
        "molded_share": extra.get("molded", 0.0),
        "delayed_share": 0.0,
        "mean_delay_s": 0.0,
        "by_cpu_hours": by_class,
    }


RESULT = {
    "baseline": figures(7800.0),
    "molding": figures(3900.0, molded=0.25),
    "params": {"trace": "demo", "max_limit_s": 86400},
    "plot_data": {
        "load": {
            "t0_s": 0.0,
            "bin_s": 1800.0,
            "series": {"baseline": [0.5, 0.7], "molding": [0.4, 0.6]},
        },
        "sizes": {"edges": [1, 2, 4], "original": [1, 2, 1], "as_run": {"molding": [2, 1, 1]}},
    },
}


def spec(page: str, script_id: str) -> dict:
    match = re.search(
        rf'<script id="{script_id}" type="application/json">(.*?)</script>', page, re.S
    )
    assert match, script_id
    return json.loads(match.group(1))


def test_molding_page_compares_the_strategies_and_draws_the_charts() -> None:
    alice = make_user("alice")
    run = MoldingRun.objects.create(
        owner=alice, status=Status.DONE, strategies=["baseline", "molding"], result=RESULT
    )
    client = Client()
    client.force_login(alice)
    page = client.get(f"/runs/molding/{run.pk}/").content.decode()
    assert "2 h 10 min" in page and "-50.0%" in page and "1 d" in page
    assert [d["label"] for d in spec(page, "spec-load")["data"]["datasets"]] == [
        "baseline",
        "molding",
    ]
    assert spec(page, "spec-response")["data"]["labels"] == ["< 1", ">= 1"]
    sizes = spec(page, "spec-sizes")
    assert sizes["data"]["labels"] == ["1", "2–3", "4–7"]
    assert [d["label"] for d in sizes["data"]["datasets"]] == ["requested", "as run (molding)"]


def test_molding_page_of_another_user_is_not_found_and_a_running_one_polls() -> None:
    run = MoldingRun.objects.create(owner=make_user("alice"), status=Status.RUNNING, progress=0.5)
    bob = Client()
    bob.force_login(make_user("bob"))
    assert bob.get(f"/runs/molding/{run.pk}/").status_code == 404
    owner = Client()
    owner.force_login(run.owner)
    page = owner.get(f"/runs/molding/{run.pk}/").content.decode()
    assert f'data-poll-url="/api/molding-runs/{run.pk}' in page


def test_runs_page_offers_a_molding_run() -> None:
    client = Client()
    client.force_login(make_user("alice"))
    page = client.get("/runs/").content.decode()
    assert "Your molding runs" in page
