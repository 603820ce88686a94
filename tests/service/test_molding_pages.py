"""The molding run page: strategies side by side, change vs baseline, the four charts."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.utils import timezone

from jobmolding.models import MoldingRun
from queuecast.longrun import Status
from tests.service.traces_support import make_user

pytestmark = pytest.mark.django_db


def figures(response_s: float, **extra: float) -> dict:
    by_class = {
        "<1": {"jobs": 3, "mean_response_s": response_s, "mean_wait_s": 60.0},
        ">=1": {"jobs": 1, "mean_response_s": 2 * response_s, "mean_wait_s": 600.0},
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


TRIED = {
    "decisions": 4,
    "only_original": 1,
    "mean_candidates": 2.25,
    "max_candidates": 3,
    "sizes": [
        {"procs": 4, "decisions": 2},
        {"procs": 8, "decisions": 3},
        {"procs": 16, "decisions": 4},
    ],
}
RESULT = {
    "baseline": figures(7800.0),
    "molding": {**figures(3900.0, molded=0.25), "candidates": TRIED},
    "params": {"trace": "demo", "max_limit_s": 86400, "grid": "none", "threshold": 0.3},
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
    page = page_of(RESULT, "alice")
    assert "2 h 10 min" in page and "-50.0%" in page and "1 d" in page
    assert [d["label"] for d in spec(page, "spec-load")["data"]["datasets"]] == [
        "baseline",
        "molding",
    ]
    assert spec(page, "spec-response")["data"]["labels"] == ["under 1 CPU-h", "1 CPU-h or more"]
    sizes = spec(page, "spec-sizes")
    assert sizes["data"]["labels"] == ["1", "2–3", "4–7"]
    assert [d["label"] for d in sizes["data"]["datasets"]] == ["requested", "as run (molding)"]


def test_molding_page_says_which_sizes_were_tried_and_labels_its_parameters() -> None:
    page = page_of(RESULT, "alice")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "molding : 2.3 sizes per job on average (at most 3) over 4 jobs" in text
    assert "1 jobs (25%) had only the size asked for" in text
    table = page.split('id="tried-sizes"')[1].split("</table>")[0]
    cells = re.findall(r'<td class="num">(\d+)</td>', table)
    assert cells == ["4", "2", "8", "3", "16", "4"]  # processors, jobs that tried it
    params = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.split('id="run-params"')[1]))
    assert "Machine&#x27;s time limit 1 d" in params and "{" not in params.split("</table>")[0]
    assert "Hold only when it saves more than 30% of the response" in params


def test_molding_page_of_another_user_is_not_found_and_a_running_one_polls() -> None:
    run = MoldingRun.objects.create(
        owner=make_user("alice"), status=Status.RUNNING, started_at=timezone.now(), progress=0.5
    )
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


def test_the_molding_form_offers_every_method_and_presets_the_live_ones() -> None:
    from predictor.services.predict import service_methods
    from traces.models import Trace

    alice = make_user("alice")
    Trace.objects.create(name="t", owner=alice, status=Status.DONE)
    client = Client()
    client.force_login(alice)
    page = client.get("/runs/").content.decode()
    wait, runtime = service_methods()
    assert 'name="wait_method"' in page and 'name="runtime_method"' in page
    # preset to the live service's methods, so a run from the page proves the answers given
    assert f'<option value="{wait}" selected>' in page
    assert f'<option value="{runtime}" selected>' in page
    assert '<option value="sim">' in page and '<option value="choose">' in page
    assert f"answers with: {wait} (waits) and {runtime} (runtimes)" in page


def page_of(result: dict, user: str) -> str:
    alice = make_user(user)
    run = MoldingRun.objects.create(
        owner=alice, status=Status.DONE, strategies=["baseline", "molding"], result=result
    )
    client = Client()
    client.force_login(alice)
    return client.get(f"/runs/molding/{run.pk}/").content.decode()


def test_the_page_shows_the_work_ratio_and_warns_when_work_is_not_conserved() -> None:
    lost = {**RESULT, "baseline": {**figures(7800.0), "work_ratio": 1.0},
            "molding": {**RESULT["molding"], "work_ratio": 0.21}}  # fmt: skip
    page = page_of(lost, "alice")
    assert 'id="work-warning"' in page and "molding ran 0.21 times the log" in page
    assert ">0.21</td>" in page and ">1.00</td>" in page
    kept = {**lost, "molding": {**RESULT["molding"], "work_ratio": 1.04}}
    page = page_of(kept, "bob")
    assert 'id="work-warning"' not in page and ">1.04</td>" in page
