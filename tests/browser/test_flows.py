"""A new user's goals, driven in headless chromium against the live server.

Log in, upload a trace and see its dashboard, predict a job and see the rangeSet chart,
start a replay and watch its progress, open the API docs. Each page is checked for console
errors and failed asset requests (``conftest.page``) and photographed at 1280 px and phone width.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from predictor.services import evaluations, runtime
from pyss_adapter.models import Replay
from queuecast.longrun import Status
from tests.browser.conftest import WAIT_S, assert_clean, shoot
from tests.core.wait_fakes import make_jobs
from traces.core.swf import format_jobs
from traces.services import ingest_swf

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def swf_file(tmp_path: Path, jobs: int = 400) -> Path:
    path = tmp_path / "browser-demo.swf"
    header = "; UnixStartTime: 1700000000\n; MaxProcs: 128\n"
    path.write_text(header + format_jobs(make_jobs(jobs)))
    return path


def wait_for(driver: Any, css: str, timeout: float = WAIT_S) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(
        ec.visibility_of_element_located((By.CSS_SELECTOR, css))
    )


def until(driver: Any, check: Any, timeout: float = WAIT_S) -> Any:
    from selenium.common.exceptions import (
        NoSuchElementException,
        StaleElementReferenceException,
        WebDriverException,
    )
    from selenium.webdriver.support.ui import WebDriverWait

    # A check that reads a node while a form's redirect replaces the page can meet the old
    # document: Chromium says "stale element" or, since 156, the generic "Node with given id
    # does not belong to the document" (a WebDriverException); both mean "look again".
    ignored = (NoSuchElementException, StaleElementReferenceException, WebDriverException)
    return WebDriverWait(driver, timeout, 0.1, ignored_exceptions=ignored).until(check)


def css(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def logged_in(driver: Any, username: str = "alice") -> Any:
    """A user whose session cookie the browser carries (the login form is tested once)."""
    user = get_user_model().objects.create_user(username)
    client = Client()
    client.force_login(user)
    driver.get(driver.base_url + "/accounts/login/")
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    driver.add_cookie({"name": settings.SESSION_COOKIE_NAME, "value": cookie, "path": "/"})
    return user


def chart_drawn(driver: Any, canvas_id: str) -> bool:
    return until(driver, lambda d: css(d, f"#{canvas_id}").get_attribute("data-drawn") == "1")


@pytest.fixture(autouse=True)
def fresh_models(settings, tmp_path) -> None:
    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path / "uploads")
    evaluations.MODELS.clear()
    runtime.MODELS.clear()


def test_log_in_upload_and_see_the_trace_dashboard(page, tmp_path) -> None:
    get_user_model().objects.create_user("alice", password="alice-password-1")
    page.get(page.base_url + "/")
    css(page, "#id_username").send_keys("alice")
    css(page, "#id_password").send_keys("alice-password-1")
    shoot(page, "01-login")
    css(page, "main form button[type=submit]").click()
    wait_for(page, "#id_file").send_keys(str(swf_file(tmp_path)))
    css(page, "#id_name").send_keys("browser-demo")
    shoot(page, "02-traces")
    css(page, "main form[enctype] button[type=submit]").click()
    until(page, lambda d: "Status: done" in css(d, "main").text)
    assert "400" in css(page, "main").text
    shoot(page, "03-trace-detail")


def test_predict_a_job_and_see_the_rangeset_chart(page, tmp_path) -> None:
    user = logged_in(page)
    trace = ingest_swf(swf_file(tmp_path), name="browser-demo", owner=user)
    page.get(page.base_url + "/")
    css(page, "a[href='/predict/']").click()
    from selenium.webdriver.support.ui import Select

    Select(wait_for(page, "#id_trace")).select_by_visible_text(trace.name)
    css(page, "#id_procs").clear()
    css(page, "#id_procs").send_keys("8")
    css(page, "#id_time_limit").clear()
    css(page, "#id_time_limit").send_keys("1h 30min")
    css(page, "#id_user_id").clear()
    css(page, "#id_user_id").send_keys("2")
    css(page, "#predict-submit").click()
    start = wait_for(page, "#card-start .big", timeout=60).text
    assert start == "now" or start.startswith("in ")
    assert " UTC" in css(page, "#card-start .sub").text
    chart_drawn(page, "rangeset-chart")
    assert css(page, "#ranges-table tbody tr").text
    shoot(page, "04-predict")


def test_watch_a_replay_progress_live_then_its_charts(page, tmp_path) -> None:
    user = logged_in(page)
    trace = ingest_swf(swf_file(tmp_path), name="browser-demo", owner=user)
    replay = Replay.objects.create(
        trace=trace, owner=user, status=Status.RUNNING, started_at=timezone.now(), progress=0.2
    )
    page.get(f"{page.base_url}/runs/replays/{replay.pk}/")
    bar = wait_for(page, "#run-progress progress")
    assert float(bar.get_attribute("value")) == pytest.approx(0.2)
    Replay.set_progress(replay.pk, 0.7)  # the worker moves on: the page follows without a reload
    until(page, lambda d: "70%" in css(d, "#run-progress [data-status]").text)
    shoot(page, "05-replay-running", phone=False)
    series = {"bin_s": 1800.0, "t0_s": 0.0, "utilisation": [0.1, 0.5, 0.9, 0.4]}
    summary = {"n_jobs": 400, "mean_wait_s": 3600.0, "utilisation": 0.5}
    Replay.finish(replay.pk, result={"all_jobs": summary, "utilisation_series": series})
    chart_drawn(page, "chart-utilisation")
    assert "1 h" in css(page, "#replay-summary").text


def test_start_a_replay_from_the_runs_page(page, tmp_path) -> None:
    user = logged_in(page)
    ingest_swf(swf_file(tmp_path), name="browser-demo", owner=user)
    page.get(page.base_url + "/runs/")
    assert not css(page, "#replay-progress").is_displayed()  # shown once a run starts
    css(page, "#replay-form button[type=submit]").click()
    until(page, lambda d: "/runs/replays/" in d.current_url, timeout=60)
    chart_drawn(page, "chart-utilisation")
    assert "Utilisation" in css(page, "#replay-summary").text
    shoot(page, "06-replay-done")
    page.get(page.base_url + "/runs/")
    assert "done" in css(page, "#replay-runs tbody").text
    shoot(page, "07-runs")


def test_api_docs_render_from_our_own_static_files(page) -> None:
    logged_in(page)
    page.get(page.base_url + "/api/docs/")
    wait_for(page, ".swagger-ui .opblock", timeout=30)
    sources = page.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; });"
    )
    assert sources and all(s.startswith(page.base_url) for s in sources), sources
    shoot(page, "08-api-docs", phone=False)
    assert_clean(page)
    page.get(page.base_url + "/api/redoc/")
    wait_for(page, ".api-content", timeout=30)
    shoot(page, "09-redoc", phone=False)


def test_submit_to_the_demo_site_see_it_held_then_release_it(page, monkeypatch) -> None:
    from tests.service.test_sites_support import FakePredictor, simulated_site

    # Waiting pays (now 50,000 s, later 0 s): the job is held, as a user would see it at a
    # busy site; the predictions themselves are the sites API's concern (tested there).
    FakePredictor(now_wait_s=50_000.0, future_wait_s=0.0).install(monkeypatch)
    site = simulated_site("demo-sim")
    logged_in(page)
    page.get(page.base_url + "/")
    css(page, "a[href='/sites/']").click()
    css(page, f"a[href='/sites/{site.pk}/']").click()
    css(page, "#sj-name").clear()
    css(page, "#sj-name").send_keys("browser-job")
    shoot(page, "10-site")
    css(page, "#submit-job").click()
    until(page, lambda d: "/jobs/" in d.current_url)
    assert "held" in wait_for(page, "#job-state").text
    shoot(page, "11-job-held")
    css(page, "#release-job").click()
    until(page, lambda d: "submitted" in css(d, "#job-state").text)
    assert css(page, "#backend-id").text not in ("", "–")
    shoot(page, "12-job-submitted", phone=False)


def test_ask_the_demo_site_for_a_later_start_see_it_in_the_hold_queue_and_release_it(
    page,
) -> None:
    from tests.service.test_sites_support import simulated_site

    # No prediction is faked: a start time the user asks for is held as asked, whatever the
    # site's predictions (the hold a new user can always see on the demo site).
    site = simulated_site("demo-sim")
    logged_in(page)
    page.get(page.base_url + f"/sites/{site.pk}/")
    css(page, "#sj-name").clear()
    css(page, "#sj-name").send_keys("later-job")
    css(page, "#sj-begin").send_keys("10min")
    css(page, "#submit-job").click()
    until(page, lambda d: "/jobs/" in d.current_url, timeout=90)
    assert "held at your request" in wait_for(page, "#job-state").text
    assert "You asked it to start no earlier than" in css(page, "#decision-time").text
    page.get(page.base_url + f"/sites/{site.pk}/holdqueue/")
    row = wait_for(page, "#held-jobs tbody tr")
    assert "later-job" in row.text and "asked to start then" in row.text
    shoot(page, "13-hold-queue")
    row.find_element("css selector", "button:not(.danger)").click()
    until(page, lambda d: "Nothing is held." in css(d, "#held-jobs").text, timeout=60)
