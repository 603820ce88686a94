"""Predict, runs, evaluation and replay pages: humanised answers, charts, warnings, access."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from predictor.models import EvaluationRun
from predictor.services import evaluations, runtime
from pyss_adapter.models import Replay
from queuecast.longrun import Status
from tests.service.traces_support import demo_trace, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def trace(tmp_path: Path):
    evaluations.MODELS.clear()
    runtime.MODELS.clear()
    return demo_trace(tmp_path, "; UnixStartTime: 1000000000\n")


def chart_spec(page: str, script_id: str) -> dict:
    match = re.search(
        rf'<script id="{script_id}" type="application/json">(.*?)</script>', page, re.S
    )
    assert match, f"no chart spec {script_id}"
    return json.loads(match.group(1))


def words(page: str) -> str:
    """The page's text without tags (terms are links inside sentences)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)).replace(" ,", ",").replace(" .", ".")


def ask(browser: Client, trace, **changes):
    query = {
        "trace": trace.pk,
        "procs": 8,
        "time_limit": "1h",
        "user_id": 2,
        "queue_id": 1,
        "confidence": 0.9,
        **changes,
    }
    return browser.get("/predict/", query)


def test_every_page_links_to_predict(browser, trace) -> None:
    for url in ("/", f"/traces/{trace.pk}/", "/runs/", "/predict/"):
        page = browser.get(url).content.decode()
        assert 'href="/predict/"' in page, url


def test_predict_page_answers_with_dates_durations_and_the_rangeset_chart(browser, trace) -> None:
    page = ask(browser, trace).content.decode()
    wait = evaluations.predict_wait(
        trace,
        {
            "user_id": 2,
            "group_id": -1,
            "queue_id": 1,
            "requested_procs": 8,
            "requested_time": 3600.0,
            "at": trace.last_submit_s,
        },
    )
    assert 'id="answer"' in page and "Predicted start" in page and " UTC" in page
    assert wait["interval_high_s"] is not None and wait["interval_level_used"] is not None
    # where the interval came from: the online rule over the jobs started last, its level
    near = min(200, wait["interval_jobs"])
    assert (
        f"calibrated on the errors (wait minus predicted wait) of the {near:,} jobs, of the "
        f"{wait['interval_jobs']:,} "
        "started last, whose predicted wait was nearest this one"
    ) in page
    from predictor.core.wait.local_interval import level_words

    assert level_words(wait["interval_level_used"], 0.9) in page
    from queuecast.humanize import duration, relative

    assert relative(wait["wait_s"]) in page  # the same number as the API, humanised
    assert not re.search(r"\d+\.\d{5,}", page.split('id="rangeset-spec"')[0])  # no raw floats
    # The runtime chart is on a time axis (seconds), not one category per range.
    spec = chart_spec(page, "rangeset-spec")
    boxes, curve, median, limit = spec["data"]["datasets"]
    assert spec["type"] == "line" and "labels" not in spec["data"]
    assert spec["options"]["scales"]["x"]["type"] in ("linear", "logarithmic")
    assert spec["qc"]["durationAxes"] == ["x"]
    ys = [p["y"] for p in curve["data"]]
    assert ys == sorted(ys) and ys[-1] == pytest.approx(1.0)  # P(finished by t)
    heights = [p["y"] for p in boxes["data"][1::4]]
    assert sum(heights) == pytest.approx(1.0)
    # The median marker lies inside a range the chart draws, and is the page's runtime.
    at = median["data"][0]["x"]
    lows, highs = [p["x"] for p in boxes["data"][0::4]], [p["x"] for p in boxes["data"][2::4]]
    assert any(lo <= at <= hi for lo, hi in zip(lows, highs, strict=True))
    assert f"median runtime</a> {duration(at)}" in page
    assert limit["data"][0]["x"] == 3600.0 and "time limit 1 h" == limit["label"]


def test_predict_page_gives_the_chance_to_start_within_the_time_asked(browser, trace) -> None:
    page = ask(browser, trace, within="10min").content.decode()
    wait = evaluations.predict_wait(trace, {
        "user_id": 2, "group_id": -1, "queue_id": 1, "requested_procs": 8,
        "requested_time": 3600.0, "at": trace.last_submit_s, "within_s": 600.0,
    })  # fmt: skip
    from queuecast.humanize import percent

    assert wait["p_within"] is not None and wait["p_within_jobs"] > 0
    text = words(page)
    assert f"Chance to start within 10 min {percent(wait['p_within'])}" in text
    assert f"of the {wait['p_within_jobs']} recent jobs whose predicted wait was nearest" in text
    assert 'href="/glossary/#p-within"' in page
    assert 'id="card-within"' not in ask(browser, trace).content.decode()  # not asked
    bad = ask(browser, trace, within="soon").content.decode()
    assert "is not a duration" in bad and 'id="answer"' not in bad
    first = words(ask(browser, trace, within="10min", at_days=0).content.decode())
    assert "Not answered yet: no job of this trace had started by then." in first


def test_predict_page_puts_the_api_errors_on_the_fields(browser, trace) -> None:
    page = ask(browser, trace, procs=100000).content.decode()
    assert "at most the machine size, 128 processors" in page and 'id="answer"' not in page
    page = ask(browser, trace, time_limit="soon").content.decode()
    assert "is not a duration" in page and 'id="answer"' not in page


def test_predict_page_warns_when_the_method_is_no_better_than_zero(browser, trace, alice) -> None:
    result = {
        "apq": {
            "aae_s": 5000.0,
            "mean_wait_s": 4000.0,
            "aae_over_mean_wait": 1.25,
            "correct_share": 0.3,
            "jobs": 10,
        }
    }
    EvaluationRun.objects.create(
        kind="wait", trace=trace, owner=alice, status=Status.DONE, result=result
    )
    page = ask(browser, trace).content.decode()
    assert 'id="accuracy-warning"' in page and "no better than always answering" in words(page)
    EvaluationRun.objects.update(result={"apq": {**result["apq"], "aae_over_mean_wait": 0.5}})
    page = ask(browser, trace).content.decode()
    assert 'id="accuracy-warning"' not in page and "50% of the mean wait" in page


def test_evaluation_page_shows_the_table_and_charts_by_method_and_wait_class(browser, trace, alice):
    by_class = {"[0,100s)": {"jobs": 4, "aae_s": 50.0}, ">=1e5s": {"jobs": 1, "aae_s": 2e5}}
    result = {
        "apq": {
            "jobs": 5,
            "aae_s": 7800.0,
            "aae_over_mean_wait": 0.8,
            "mean_wait_s": 9750.0,
            "scaled_aae": 1.5,
            "correct_share": 0.6,
            "aae_by_class": by_class,
        },
        "zero": {
            "jobs": 5,
            "aae_s": 9750.0,
            "aae_over_mean_wait": 1.0,
            "mean_wait_s": 9750.0,
            "scaled_aae": 2.0,
            "correct_share": 0.4,
            "aae_by_class": by_class,
            "ci_vs_apq": {"diff_s": 1950.0, "lo_s": 100.0, "hi_s": 3600.0},
        },
    }
    run = EvaluationRun.objects.create(
        kind="wait", trace=trace, owner=alice, status=Status.DONE, result=result
    )
    page = browser.get(f"/runs/evaluations/{run.pk}/").content.decode()
    assert "2 h 10 min" in page and "≥ zero" in page and "[1 min 40 s, 1 h]" in page
    spec = chart_spec(page, "spec-class")
    assert [d["label"] for d in spec["data"]["datasets"]] == ["apq", "zero"]
    assert spec["data"]["datasets"][0]["data"][0] == 50.0
    assert chart_spec(page, "spec-method")["data"]["labels"] == ["apq", "zero"]
    run.params = {"elapsed_s": 7800.0, "selection": {"targets": 5}}
    run.save()
    page = browser.get(f"/runs/evaluations/{run.pk}/").content.decode()
    params = page.split('id="run-params"')[1].split("</table>")[0]
    assert "2 h 10 min" in params and "targets" not in params


def test_a_running_run_page_polls_its_api_address(browser, trace, alice) -> None:
    run = EvaluationRun.objects.create(
        kind="wait",
        trace=trace,
        owner=alice,
        status=Status.RUNNING,
        progress=0.4,
        started_at=timezone.now(),
    )
    page = browser.get(f"/runs/evaluations/{run.pk}/").content.decode()
    assert f'data-poll-url="/api/evaluations/{run.pk}"' in page and 'value="0.4"' in page


def test_evaluations_of_others_are_hidden(trace, alice) -> None:
    run = EvaluationRun.objects.create(kind="wait", trace=trace, owner=alice)
    bob = Client()
    bob.force_login(make_user("bob"))
    assert bob.get(f"/runs/evaluations/{run.pk}/").status_code == 404
    assert f"/runs/evaluations/{run.pk}/" not in bob.get("/runs/").content.decode()


def test_replay_page_draws_utilisation_over_time(browser, trace, alice) -> None:
    result = {
        "all_jobs": {"n_jobs": 3, "mean_wait_s": 7800.0, "utilisation": 0.5},
        "utilisation_series": {"bin_s": 1800.0, "t0_s": 0.0, "utilisation": [0.2, 0.4, 0.6]},
    }
    replay = Replay.objects.create(trace=trace, owner=alice, status=Status.DONE, result=result)
    page = browser.get(f"/runs/replays/{replay.pk}/").content.decode()
    assert "2 h 10 min" in page and "50.0%" in page
    points = chart_spec(page, "spec-utilisation")["data"]["datasets"][0]["data"]
    assert [p["y"] for p in points] == [0.2, 0.4, 0.6]
    assert points[1]["x"] == pytest.approx(1800 / 86400, abs=1e-3)


def test_runs_page_offers_both_starts_through_the_api(browser, trace) -> None:
    page = browser.get("/runs/").content.decode()
    assert 'data-api-url="/api/traces/{trace}/evaluations/"' in page
    assert 'data-api-url="/api/traces/{trace}/replays/"' in page


def test_trace_page_shows_the_dashboard_charts(browser, trace) -> None:
    page = browser.get(f"/traces/{trace.pk}/").content.decode()
    jobs = chart_spec(page, "spec-jobs")["data"]["datasets"][0]["data"]
    assert sum(jobs) == trace.job_count
    sizes = chart_spec(page, "spec-sizes")
    assert sum(sizes["data"]["datasets"][0]["data"]) == pytest.approx(1.0, abs=1e-3)
    assert "Predict a job on this trace" in page


def test_evaluation_page_shows_interval_coverage_when_the_run_has_it(browser, trace, alice):
    interval = {"0.8": {"coverage": 0.812, "mean_width_s": 3600.0},
                "0.9": {"coverage": 0.9, "mean_width_s": 7800.0}}  # fmt: skip
    result = {"apq": {"jobs": 5, "aae_s": 60.0, "mean_wait_s": 120.0, "interval": interval}}
    run = EvaluationRun.objects.create(kind="wait", trace=trace, owner=alice, status=Status.DONE,
                                       result=result)  # fmt: skip
    page = browser.get(f"/runs/evaluations/{run.pk}/").content.decode()
    assert "Coverage at 80%" in words(page) and "81.2%" in page and "2 h 10 min" in page
    why = words(page.split('id="coverage-why"')[1].split("</div>")[0])
    assert "here 81.2% at 80%; 90.0% at 90% over 5 test jobs" in why
    assert 'href="/glossary/#interval-coverage"' in page
    assert 'id="interval-classes"' not in page  # a run made before stop 59: no split


def test_evaluation_page_shows_coverage_by_the_predicted_wait(browser, trace, alice):
    from predictor.core.wait.metrics import WAIT_CLASS_LABELS

    by = {label: {"jobs": 0, "coverage": None} for label in WAIT_CLASS_LABELS}
    by["[0,100s)"] = {"jobs": 3, "coverage": 2 / 3}
    by[">=1e5s"] = {"jobs": 2, "coverage": 0.5}
    interval = {"0.8": {"coverage": 0.8, "mean_width_s": 60.0, "by_prediction": by},
                "0.9": {"coverage": 0.6, "mean_width_s": 90.0, "by_prediction": by}}  # fmt: skip
    result = {"apq": {"jobs": 5, "aae_s": 60.0, "mean_wait_s": 120.0, "interval": interval}}
    run = EvaluationRun.objects.create(kind="wait", trace=trace, owner=alice, status=Status.DONE,
                                       result=result)  # fmt: skip
    page = browser.get(f"/runs/evaluations/{run.pk}/").content.decode()
    table = words(page.split('id="interval-classes"')[1].split("</table>")[0])
    assert "predicted under 1 min 40 s" in table and "predicted 1 d 4 h or more" in table
    assert "66.7% (3)" in table and "50.0% (2)" in table and table.count("–") >= 3
    assert "Coverage at 90% by the wait each job was predicted" in words(page)


def test_a_calibrated_interval_in_the_answer_replaces_the_qbets_bound() -> None:
    from predictor.pages.predict import wait_interval

    calibrated = {"interval": {"low_s": 60.0, "high_s": 7800.0, "confidence": 0.8}}
    assert wait_interval(calibrated, 0.8) == {"lower_s": 60.0, "upper_s": 7800.0, "level": 0.8,
                                              "kind": "calibrated"}  # fmt: skip
    assert wait_interval({"qbets_upper_s": 99.0}, 0.8)["kind"] == "qbets"
    flat = {"interval_low_s": 0.0, "interval_high_s": 5400.0, "confidence": 0.9,
            "qbets_upper_s": 99.0}  # fmt: skip
    assert wait_interval(flat, 0.5) == {"lower_s": 0.0, "upper_s": 5400.0, "level": 0.9,
                                        "kind": "calibrated", "about": None}  # fmt: skip
    adaptive = {**flat, "interval_jobs": 2000, "interval_level_used": 0.9134}
    about = wait_interval(adaptive, 0.5)["about"]
    words = "the errors (wait minus predicted wait) of the 200 jobs, of the 2,000 started last"
    assert words in about
    assert "at level 0.913" in about
    pushed = {**adaptive, "interval_level_used": 1.0138}  # the misses pushed it past the pool
    assert "over all of them" in wait_interval(pushed, 0.5)["about"]
    assert "from 0.9 to 1.014" in wait_interval(pushed, 0.5)["about"]


def test_runs_list_follows_a_running_replay_live(browser, trace, alice) -> None:
    replay = Replay.objects.create(
        trace=trace, owner=alice, status=Status.RUNNING, started_at=timezone.now(), progress=0.3
    )
    page = browser.get("/runs/").content.decode()
    assert f'data-poll-url="/api/replays/{replay.pk}"' in page and 'value="0.3"' in page


def test_predict_page_refreshes_itself_while_the_model_is_fitted(browser, trace, monkeypatch):
    """A first fit that outlasts the request's wait answers 503 in the API; the page says
    so and asks again by itself (meta refresh), so the answer appears once it is stored."""
    from predictor.pages import predict as page_module
    from predictor.services.background_fit import ModelNotReady

    def not_ready(*args, **kwargs):
        raise ModelNotReady("The model of this trace is being fitted.")

    monkeypatch.setattr(evaluations, "predict_wait", not_ready)
    page = ask(browser, trace).content.decode()
    refresh = page_module.FITTING_REFRESH_S
    assert f'<meta http-equiv="refresh" content="{refresh}">' in page
    assert "being fitted" in page and f"refreshes every {refresh} s" in page
    assert 'id="answer"' not in page


def test_ranges_that_may_miss_the_runtime_say_so_and_their_median_is_conditional(
    browser, trace, monkeypatch
) -> None:
    from predictor.pages import predict as predict_page
    from predictor.pages import rangeset

    real = predict_page.runtime_service.predict_runtime

    def calibrated(trace, job):  # the service's answer, its probabilities calibrated to 60%
        answer = real(trace, job)
        total = sum(r["probability"] for r in answer["ranges"])
        ranges = [{**r, "probability": 0.6 * r["probability"] / total} for r in answer["ranges"]]
        return {**answer, "ranges": ranges}

    monkeypatch.setattr(predict_page.runtime_service, "predict_runtime", calibrated)
    text = words(ask(browser, trace).content.decode())
    assert "in none of these ranges (it still ends by its time limit) 40%" in text
    assert "The ranges hold the runtime with a 60% chance" in text
    assert "the middle of the ranges" in text
    assert rangeset.outside_share([{"probability": 0.7}, {"probability": 0.3}]) == 0.0
    assert rangeset.outside_share([{"probability": 0.25}]) == pytest.approx(0.75)
    monkeypatch.setattr(predict_page.runtime_service, "predict_runtime", real)
    plain = words(ask(browser, trace).content.decode())  # ranges that add up to 100%
    assert "in none of these ranges" not in plain
    assert "the middle of the ranges" not in plain
    assert "the job has finished by then with a 50% chance." in plain
