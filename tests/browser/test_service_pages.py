"""Why it waits and where to submit, in headless chromium: the why block on the predict page
(a hand-built queue with a known answer), the where-to-submit form typed as a user would, and
their glossary links. Screenshots at 1280 px and phone width go to
``$QUEUECAST_SCREENSHOTS_DIR``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from queuecast import glossary
from tests.browser.conftest import shoot
from tests.browser.test_flows import (  # noqa: F401 (fresh_models: autouse fixture)
    css,
    fresh_models,
    logged_in,
    until,
    wait_for,
)
from tests.service.test_why_api import crafted_log
from traces.core.swf import format_jobs
from traces.services import ingest_swf

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def terms_in(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, f"{selector} a.term")


def assert_terms_defined(driver: Any, selector: str) -> set[str]:
    links = terms_in(driver, selector)
    assert links, f"no glossary link in {selector}"
    for link in links:
        key = link.get_attribute("href").split("#")[1]
        assert link.get_attribute("title") == glossary.get(key).short
    return {link.get_attribute("href").split("#")[1] for link in links}


def test_why_block_explains_the_queue_and_links_its_terms(page, tmp_path: Path) -> None:
    user = logged_in(page)
    log, _ = crafted_log()
    path = tmp_path / "crafted.swf"
    path.write_text("; UnixStartTime: 1700000000\n; MaxProcs: 128\n" + format_jobs(log))
    trace = ingest_swf(path, name="crafted", owner=user)
    query = f"?trace={trace.pk}&procs=64&time_limit=1h&user_id=2&queue_id=1&confidence=0.9"
    page.get(page.base_url + "/predict/" + query)
    why = wait_for(page, "#why", timeout=60)
    assert "It waits for the 1 job queued ahead of it" in css(page, "#why-reason").text
    assert "28 instead of 64 processors starts about 2 h sooner." in css(page, "#why-sooner").text
    rows = [r.text for r in why.find_elements("css selector", "#why-ahead tbody tr")]
    assert rows[0].startswith("queued #1 100 processors in 1 h in 3 h")
    assert rows[1].startswith("running 108 processors started in 1 h")
    keys = assert_terms_defined(page, "#why")
    assert {"why-it-waits", "sooner-change", "jobs-ahead"} <= keys
    shoot(page, "20-why-it-waits")
    css(page, "#why a.term[href$='#why-it-waits']").click()
    until(page, lambda d: d.current_url.endswith("/glossary/#why-it-waits"))
    assert "EASY backfilling forward" in css(page, "dt#why-it-waits + dd").text


def test_where_to_submit_form_compares_sites_and_traces_sorted_by_finish(page) -> None:
    from selenium.webdriver.support.ui import Select

    from tests.service.test_sites_support import simulated_site

    site = simulated_site("demo-sim")
    logged_in(page)
    page.get(page.base_url + "/")
    css(page, "a[href='/where/']").click()
    css(page, "#id_procs").clear()
    css(page, "#id_procs").send_keys("8")
    css(page, "#id_time_limit").clear()
    css(page, "#id_time_limit").send_keys("2h")
    css(page, "#id_traces").click()
    Select(css(page, "#id_confidence")).select_by_visible_text("80%")
    css(page, "#where-submit").click()
    wait_for(page, "#where-table", timeout=90)

    def first_cells(driver: Any) -> list[str]:
        rows = driver.find_elements("css selector", "#where-table tbody tr")
        return [r.find_element("css selector", "td").text for r in rows]

    # While the trace's first fit runs in its child the trace is skipped as being fitted and
    # the page asks again every few seconds, until its row is there too. Wait for the page
    # that asks no more (a read between a refresh and the next table could see either).
    def settled(driver: Any) -> bool:
        names = first_cells(driver)
        refreshing = driver.find_elements("css selector", "meta[http-equiv='refresh']")
        return not refreshing and any(site.trace.name in n for n in names)

    until(page, settled, timeout=120)
    table = css(page, "#where-table")
    rows = table.find_elements("css selector", "tbody tr")
    names = [r.find_element("css selector", "td").text for r in rows]
    assert any(site.name in n for n in names) and any(site.trace.name in n for n in names)
    assert not page.find_elements("css selector", "meta[http-equiv='refresh']")
    assert "finishes first" in names[0]
    finishes = [r.find_elements("css selector", "td")[2].text for r in rows]
    assert all(f == "now" or f.startswith("in ") for f in finishes)
    assert "(80%)" in rows[0].text
    assert css(page, "#answer h2").text == "8 processors for 2 h"
    assert {"why-it-waits", "wait-interval"} <= assert_terms_defined(page, "#where-table")
    shoot(page, "21-where-to-submit")
