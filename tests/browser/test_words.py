"""Words a user reads, in headless chromium: glossary links and header tooltips, the decision
as a sentence, the runtime chart on a time axis, the answer first on a phone, run starts that
land on the run's page, times typed as "2h", and the API docs leading back to the app.
Screenshots at 1280 px and phone width go to ``$QUEUECAST_SCREENSHOTS_DIR``."""

from __future__ import annotations

import re
from typing import Any

import pytest

from predictor.models import EvaluationRun
from queuecast import glossary
from queuecast.longrun import Status
from tests.browser.conftest import PHONE, shoot
from tests.browser.test_flows import (  # noqa: F401 (fresh_models: autouse fixture)
    chart_drawn,
    css,
    fresh_models,
    logged_in,
    swf_file,
    until,
    wait_for,
)
from traces.services import ingest_swf

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: A tick of a duration axis: one number and one unit ("2 h", "1 d"), never "1 h 7 min".
ROUND_TICK = re.compile(r"^\d+ (s|min|h|d|y)$|^0 s$")


def all_css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def wait_evaluation(trace: Any, owner: Any) -> EvaluationRun:
    interval = {
        "0.8": {"coverage": 0.781, "mean_width_s": 22468.0, "uncalibrated": 31},
        "0.9": {"coverage": 0.886, "mean_width_s": 45366.0, "uncalibrated": 31},
    }
    by_class = {"[0,100s)": {"jobs": 4, "aae_s": 50.0}, ">=1e5s": {"jobs": 1, "aae_s": 2e5}}
    row = {"jobs": 1000, "aae_s": 10920.0, "aae_over_mean_wait": 0.74, "mean_wait_s": 14760.0,
           "scaled_aae": 19.29, "correct_share": 0.6, "predictions_per_s": 179.0,
           "aae_by_class": by_class, "interval": interval}  # fmt: skip
    zero = {**row, "aae_s": 14760.0, "aae_over_mean_wait": 1.0,
            "ci_vs_apq": {"diff_s": 3840.0, "lo_s": 2640.0, "hi_s": 4320.0}}  # fmt: skip
    return EvaluationRun.objects.create(
        kind="wait", trace=trace, owner=owner, status=Status.DONE, methods=["apq", "zero"],
        result={"apq": row, "zero": zero},
        params={"tune_fraction": 0.2, "limit": 1000, "elapsed_s": 18.4},
    )  # fmt: skip


def test_terms_link_to_the_glossary_and_headers_show_their_definition(page, tmp_path) -> None:
    user = logged_in(page)
    trace = ingest_swf(swf_file(tmp_path), name="browser-demo", owner=user)
    run = wait_evaluation(trace, user)
    page.get(f"{page.base_url}/runs/evaluations/{run.pk}/")
    headers = all_css(page, "#wait-results thead th a.term")
    assert len(headers) >= 6  # AAE, AAE / mean wait, scaled AAE, correct, vs APQ, predictions/s
    for link in headers:  # the tooltip is the glossary's first sentence of that term
        key = link.get_attribute("href").split("#")[1]
        assert link.get_attribute("title") == glossary.get(key).short
    assert "80.0%" in css(page, "#coverage-why").text and "78.1%" in css(page, "#coverage-why").text
    shoot(page, "13-evaluation-terms")
    keys = {a.get_attribute("href").split("#")[1] for a in all_css(page, "main a.term")}
    css(page, "#wait-results thead a.term[href$='#aae']").click()
    until(page, lambda d: d.current_url.endswith("/glossary/#aae"))
    entry = css(page, "dt#aae")
    assert entry.is_displayed() and "Average absolute error" in css(page, "dt#aae + dd").text
    top = page.execute_script("return arguments[0].getBoundingClientRect().top;", entry)
    assert 0 <= top < 200  # the browser scrolled to the entry
    ids = set(
        page.execute_script("return [...document.querySelectorAll('dt[id]')].map(e => e.id);")
    )
    assert keys <= ids, keys - ids  # every term the page links to has its entry
    shoot(page, "14-glossary")


def site_job_page(page: Any, monkeypatch: Any, time_limit: str) -> Any:
    from tests.service.test_sites_support import FakePredictor, simulated_site

    FakePredictor(now_wait_s=50_000.0, future_wait_s=0.0, wait_per_proc=10.0).install(monkeypatch)
    site = simulated_site("demo-sim")
    logged_in(page)
    page.get(f"{page.base_url}/sites/{site.pk}/")
    css(page, "#sj-time").clear()
    css(page, "#sj-time").send_keys(time_limit)
    css(page, "#submit-job").click()
    return site


def test_the_job_page_says_the_decision_in_sentences(page, monkeypatch) -> None:
    site_job_page(page, monkeypatch, "1h 30min")  # typed like on Predict
    until(page, lambda d: "/jobs/" in d.current_url)
    state = wait_for(page, "#job-state").text
    from holdqueue.models import SiteJob

    job = SiteJob.objects.latest("pk")
    # "1h 30min" as typed, scaled with a molded size (work-conserving: between no speed-up
    # and linear speed-up), shown in h and min.
    ratio = job.procs_requested / job.procs_chosen
    assert 5400 <= job.time_limit_s <= 5400 * max(ratio, 1.0) + 1, job.time_limit_s
    assert re.search(r"time limit \d+ h( \d+ min)?", state), state
    size = css(page, "#decision-size").text
    assert re.search(r"Of the \d+ sizes tried \(.* processors\)", size), size
    time = css(page, "#decision-time").text
    assert re.search(r"^Now or later\. Holding it .+ saves \d+% of its .+ response", time), time
    assert "more than the 30% the rule asks for, so it is held until" in time
    assert not any(sign in time for sign in (" x ", ">=", " < ", "{"))  # not a formula
    shoot(page, "15-job-decision")


def test_a_time_that_is_not_a_duration_is_refused_in_the_forms_words(page, monkeypatch) -> None:
    site_job_page(page, monkeypatch, "soon")
    message = until(page, lambda d: css(d, "#submit-progress [data-error]").text)
    assert message.startswith("Time limit: 'soon' is not a duration")
    assert "/sites/" in page.current_url and "/jobs/" not in page.current_url
    css(page, "#sj-time").clear()
    css(page, "#sj-time").send_keys("400d")  # beyond the API's bound: said in durations
    css(page, "#submit-job").click()
    bound = until(
        page, lambda d: "at most" in (t := css(d, "#submit-progress [data-error]").text) and t
    )
    assert bound == "Time limit: at most 30 d", bound
    page.get(page.base_url + "/glossary/")  # the refused POST is this test's point, not an error
    page.get_log("browser")


def css_duration(page: Any, seconds: float) -> str:
    """The page's own duration words for ``seconds`` (static/js/queuecast.js)."""
    return page.execute_script("return window.qcDuration(arguments[0]);", seconds)


def predict(page: Any, trace: Any) -> None:
    query = f"trace={trace.pk}&procs=8&time_limit=1h&user_id=2&confidence=0.9"
    page.get(f"{page.base_url}/predict/?{query}")
    chart_drawn(page, "rangeset-chart")


def test_the_runtime_chart_has_a_time_axis_with_round_ticks(page, tmp_path) -> None:
    user = logged_in(page)
    trace = ingest_swf(swf_file(tmp_path), name="browser-demo", owner=user)
    predict(page, trace)
    axis = page.execute_script(
        "var c = document.getElementById('rangeset-chart').qcChart;"
        "var x = c.scales.x, sets = c.data.datasets;"
        "return {type: x.type, ticks: x.ticks.map(t => t.label), min: x.min, max: x.max,"
        " boxes: sets[0].data, median: sets[2].data[0].x, left: c.chartArea.left,"
        " right: c.chartArea.right, pixel: x.getPixelForValue(sets[2].data[0].x)};"
    )
    assert axis["type"] in ("linear", "logarithmic")
    assert len(axis["ticks"]) >= 3 and all(ROUND_TICK.match(t) for t in axis["ticks"]), axis
    lows, highs = [p["x"] for p in axis["boxes"][0::4]], [p["x"] for p in axis["boxes"][2::4]]
    assert any(lo <= axis["median"] <= hi for lo, hi in zip(lows, highs, strict=True))
    assert axis["left"] <= axis["pixel"] <= axis["right"]  # the median is drawn where it is
    assert ROUND_TICK.match(css_duration(page, axis["max"]))  # the axis ends on a round time
    median_text = css(page, "#card-finish .sub").text.split("median runtime")[1].strip()
    assert median_text in css(page, "#ranges-table tr.chosen").get_attribute("title")
    shoot(page, "16-runtime-chart")


def test_on_a_phone_the_answer_comes_first(page, tmp_path) -> None:
    user = logged_in(page)
    trace = ingest_swf(swf_file(tmp_path), name="browser-demo", owner=user)
    page.set_window_size(*PHONE)
    predict(page, trace)
    answer_top, form_top, height = page.execute_script(
        "return [document.getElementById('answer').getBoundingClientRect().top,"
        " document.getElementById('predict-form').getBoundingClientRect().top,"
        " window.innerHeight];"
    )
    assert answer_top < form_top and answer_top < height / 2, (answer_top, form_top, height)
    assert (
        css(page, "#card-start").is_displayed() and css(page, "#answer a.phone-only").is_displayed()
    )
    shoot(page, "17-predict-phone")
    assert page.execute_script(
        "return document.getElementById('answer').getBoundingClientRect().top"
        " > document.getElementById('predict-form').getBoundingClientRect().top;"
    )  # at desktop width (shoot ends there) the form comes first


@pytest.mark.parametrize(("form", "page_path"), [("molding", "/runs/molding/"),
                                                 ("evaluation", "/runs/evaluations/")])  # fmt: skip
def test_starting_a_run_lands_on_its_page(page, tmp_path, form: str, page_path: str) -> None:
    user = logged_in(page)
    ingest_swf(swf_file(tmp_path), name="browser-demo", owner=user)
    page.get(page.base_url + "/runs/")
    css(page, f"#{form}-form button[type=submit]").click()
    until(page, lambda d: page_path in d.current_url, timeout=120)
    if form == "molding":
        summary = until(page, lambda d: css(d, "#tried-summary").text, timeout=120)
        assert "sizes per job on average" in summary
        shoot(page, "18-molding-sizes-tried")
    else:  # the run ends in its own process (``page`` waits for it): it ends done
        run = EvaluationRun.objects.get(pk=int(page.current_url.rstrip("/").split("/")[-1]))
        ended = (Status.DONE, Status.FAILED)
        until(page, lambda d: EvaluationRun.objects.get(pk=run.pk).status in ended, timeout=180)
        assert EvaluationRun.objects.get(pk=run.pk).status == Status.DONE


def test_api_docs_lead_back_to_the_app(page) -> None:
    logged_in(page)
    for docs, ready in (("/api/docs/", ".swagger-ui .opblock"), ("/api/redoc/", ".api-content")):
        page.get(page.base_url + docs)
        wait_for(page, ready, timeout=30)
        css(page, ".qc-back a.qc-brand").click()
        until(page, lambda d: d.current_url == page.base_url + "/")
        assert css(page, "header.top .brand").text == "Queuecast"
