"""The ``why`` block of the trace wait API and the live site predict API, on hand-built queues.

The queue (128 processors): 108 run until 1 h after the request (20 free); the head asks 100
for 2 h. A request of 64 for 1 h cannot join the head when the running jobs end (28 left),
so it starts when the head ends, at 3 h; alone it would start at 1 h. 28 processors start it
at 1 h: "28 instead of 64 processors starts about 2 h sooner". No time limit starts it now
(64 > 20 free). Derivation: tests/core/test_why.py's rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from holdqueue.services import backends as bk
from holdqueue.services import predict as site_predict
from predictor.core.state.request import JobRequest
from predictor.core.state.snapshot import LiveJob, from_live
from predictor.services import predict as predict_service
from tests.core.wait_fakes import make_jobs
from tests.service.test_sites_support import simulated_site
from tests.service.traces_support import api_for, make_user
from traces.core.swf import format_jobs
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


def crafted_log() -> tuple[pd.DataFrame, float]:
    """500 finished jobs, then the queue of the module docstring at instant T."""
    jobs = make_jobs(500)
    t = float((jobs["submit_time"] + jobs["wait_time"] + jobs["run_time"]).max() + 1000)
    extra = jobs.iloc[:2].copy()
    extra["job_id"] = [501, 502]
    extra["submit_time"] = [t - 700, t]
    extra["wait_time"] = [100.0, 50_000.0]  # the first runs from T - 600, the second waits
    extra["run_time"] = [100_000.0, 7200.0]
    extra["allocated_procs"] = extra["requested_procs"] = [108, 100]
    extra["requested_time"] = [4200.0, 7200.0]  # the first is expected to end at T + 1 h
    return pd.concat([jobs, extra], ignore_index=True), t


def test_trace_answer_says_it_waits_for_the_job_ahead_and_28_processors_start_it_2h_sooner(
    tmp_path: Path,
):
    log, t = crafted_log()
    path = tmp_path / "crafted.swf"
    path.write_text("; MaxProcs: 128\n" + format_jobs(log))
    predict_service.BUNDLES.clear()
    trace = ingest_swf(path, name="crafted")
    body = {"user_id": 2, "queue_id": 1, "requested_procs": 64, "requested_time": 3600, "at": t}
    res = api_for(make_user("alice")).post(
        f"/api/traces/{trace.pk}/predictions/wait", body, format="json"
    )
    assert res.status_code == 200, res.json()
    why = res.json()["why"]
    assert (why["reason"], why["predicted_start_s"], why["free_procs"]) == ("jobs_ahead", 10800, 20)
    ahead = why["jobs_ahead"]
    assert (ahead["queued"], ahead["queued_procs"], ahead["running_procs"]) == (1, 100, 108)
    assert ahead["queued_jobs"] == [
        {"position": 1, "procs": 100, "predicted_start_s": 3600, "predicted_end_s": 10800}
    ]
    assert ahead["running_jobs"] == [{"procs": 108, "predicted_end_s": 3600}]
    best = why["sooner"]["best"]
    assert (best["kind"], best["procs"], best["saved_s"]) == ("fewer_procs", 28, 7200)
    assert best["sentence"] == "28 instead of 64 processors starts about 2 h sooner."
    assert why["sooner"]["shorter_limit"] is None
    assert why["sooner"]["later_submission"]["delay_s"] == 10800
    assert "1 job queued ahead" in why["sentence"] and "100 processors" in why["sentence"]
    assert "estimate_note" in why  # the API keeps it (null or the sentence's last part)
    assert why["estimate_note"] is None or why["sentence"].endswith(why["estimate_note"])


def test_site_answer_explains_its_live_queue_with_a_backfill_hole(monkeypatch):
    # 60 of 100 run until 1 h 20 min; the head asks 80 for 1 h (shadow 1 h 20 min, extra 20).
    # 30 for 3 h wait until the head ends (2 h 20 min); a limit of 1 h 20 min backfills now.
    site = simulated_site()
    site_predict._MODELS.clear()
    real = site_predict.snapshot_now

    def crafted(site, when):
        snap, jobs = real(site, when)
        now = bk.site_seconds(site, when)
        live = [
            LiveJob(JobRequest(user=1, procs=60, req_time_s=4800, submit_s=now - 10, job_id=1),
                    "running", start_s=now),
            LiveJob(JobRequest(user=1, procs=80, req_time_s=3600, submit_s=now - 5, job_id=2),
                    "waiting"),
        ]  # fmt: skip
        return from_live(live, now, snap.history, machine_procs=100), jobs

    monkeypatch.setattr(site_predict, "snapshot_now", crafted)
    res = api_for(make_user("alice")).post(
        f"/api/sites/{site.pk}/predict/", {"procs": 30, "time_limit_s": 10800}, format="json"
    )
    assert res.status_code == 200, res.data
    why = res.data["why"]
    assert why["reason"] == "jobs_ahead"
    assert why["predicted_start_s"] == pytest.approx(8400, abs=2)
    limit = why["sooner"]["shorter_limit"]
    assert limit["time_limit_s"] == 4800 and limit["predicted_start_s"] == 0
    assert limit["sentence"].startswith("A time limit of at most 1 h 20 min can start now")
    site_predict._MODELS.clear()


def crafted_trace_page(tmp_path: Path) -> tuple[Any, Any, float]:
    """The crafted log stored as a trace, a browser logged in, the log's instant."""
    from django.test import Client

    log, t = crafted_log()
    path = tmp_path / "crafted.swf"
    path.write_text("; MaxProcs: 128\n" + format_jobs(log))
    predict_service.BUNDLES.clear()
    trace = ingest_swf(path, name="crafted")
    browser = Client()
    browser.force_login(make_user("alice"))
    return trace, browser, t


def test_predict_page_shows_why_it_waits_with_the_jobs_ahead_and_the_change(tmp_path: Path):
    trace, browser, t = crafted_trace_page(tmp_path)
    assert trace.last_submit_s == t  # a blank instant is the last submission
    query = {"trace": trace.pk, "procs": 64, "time_limit": "1h", "user_id": 2, "queue_id": 1,
             "confidence": 0.9}  # fmt: skip
    page = browser.get("/predict/", query).content.decode()
    assert 'id="why"' in page and 'href="/glossary/#why-it-waits"' in page
    assert "28 instead of 64 processors starts about 2 h sooner." in page
    assert "queued #1" in page and "100 processors" in page
    assert 'href="/glossary/#jobs-ahead"' in page and 'href="/glossary/#sooner-change"' in page


def test_the_glossary_states_the_saving_threshold_the_code_applies():
    from predictor.core.why import sooner as rule
    from queuecast import glossary

    text = " ".join(glossary.get("sooner-change").paragraphs)
    assert f"max({rule.MIN_SAVING_S:g} s, {rule.MIN_SAVING_SHARE:.0%} of the wait)" in text
    assert (
        f"at least 1 min and {rule.MIN_SAVING_SHARE:.0%} of its"
        in glossary.get("sooner-change").short
    )


def test_predict_page_shows_both_methods_and_warns_when_no_better_than_zero_or_requested(
    tmp_path: Path, monkeypatch
):
    trace, browser, _ = crafted_trace_page(tmp_path)
    query = {"trace": trace.pk, "procs": 8, "time_limit": "1h", "user_id": 2, "queue_id": 1,
             "confidence": 0.9}  # fmt: skip
    page = browser.get("/predict/", query).content.decode()
    assert 'id="methods-note"' in page and 'href="/glossary/#accuracy-here"' in page
    bad = {
        "wait": {"jobs": 40, "aae_s": 7200.0, "zero_aae_s": 3600.0, "better_than_zero": False},
        "runtime": {"jobs": 100, "success": 0.3, "coverage": 0.2, "requested_success": 0.5,
                    "requested_coverage": 0.2, "better_than_requested": False},
    }  # fmt: skip
    monkeypatch.setattr(predict_service, "accuracy_body", lambda *a, **k: bad)
    page = browser.get("/predict/", {**query, "procs": 9}).content.decode()
    assert 'id="wait-accuracy-warning"' in page and "off by 2 h on average" in page
    assert "(1 h)" in page  # always-zero's error, with its unit
    assert 'id="runtime-accuracy-warning"' in page and "30% of the time" in page


def test_the_glossary_states_the_accuracy_window_and_the_choice_rule_the_code_applies():
    from predictor.core.bundle import TUNE_FRACTION
    from predictor.core.runtime.choose import COVERAGE_CEILING
    from queuecast import glossary

    text = " ".join(glossary.get("accuracy-here").paragraphs)
    assert f"the last {predict_service.RUNTIME_RECENT} jobs that ended" in text
    assert f"first {TUNE_FRACTION:.0%} of the trace" in text
    assert f"at or below {COVERAGE_CEILING:.0%}" in text


def test_the_glossary_states_the_headline_rule_the_code_applies():
    from holdqueue.services.predict import CALIBRATION_JOBS
    from jobmolding.core import headline
    from queuecast import glossary

    text = " ".join(glossary.get("headline-rule").paragraphs)
    assert f"last {CALIBRATION_JOBS} finished jobs" in text
    assert f"more than {headline.SWITCH_Z:g} standard errors" in text
    assert f"fewer than {headline.MIN_JOBS} jobs, the {headline.DEFAULT}" in text
    assert len(headline.RULES) == 4 and "geometric mean" in text
