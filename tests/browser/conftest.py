"""Headless Debian chromium through the system chromedriver (Selenium), against pytest-django's
live server on 127.0.0.1. Nothing downloads a browser: without ``chromium`` and
``chromedriver`` on PATH the tests skip saying so (``scripts/install-browser`` installs
them), and with ``QUEUECAST_REQUIRE_BROWSER=1`` (CI) they fail instead.

Every page a test opens is checked for console errors and failed asset requests;
screenshots go to ``$QUEUECAST_SCREENSHOTS_DIR`` (default ``artifacts/screenshots/``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("DJANGO_LIVE_TEST_SERVER_ADDRESS", "127.0.0.1")

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("QUEUECAST_SCREENSHOTS_DIR", ROOT / "artifacts" / "screenshots"))
DESKTOP = (1280, 900)
PHONE = (390, 844)
MAX_SHOT_HEIGHT = 5000
WAIT_S = 20


def _binaries() -> tuple[str | None, str | None]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    return chromium, shutil.which("chromedriver")


def _missing(reason: str) -> None:
    if os.environ.get("QUEUECAST_REQUIRE_BROWSER") == "1":
        pytest.fail(f"QUEUECAST_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(f"{reason}: run scripts/install-browser (Debian chromium + chromium-driver)")


@pytest.fixture(scope="session")
def driver() -> Iterator[Any]:
    chromium, chromedriver = _binaries()
    if not chromium or not chromedriver:
        _missing("chromium or chromedriver is not on PATH")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed (pip install -e '.[test]')")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={DESKTOP[0]},{DESKTOP[1]}", "--disable-extensions",
                "--no-first-run", "--disable-background-networking"):  # fmt: skip
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    browser.set_page_load_timeout(60)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    yield browser
    browser.quit()


@pytest.fixture
def page(driver, live_server) -> Iterator[Any]:
    """The driver on a fresh session; the console must be clean when the test ends. The last
    test's page is left first: a page that polls (an evaluation's status) would otherwise
    poll once more without the cookies and log a 401 into this test."""
    driver.get("about:blank")
    driver.delete_all_cookies()
    driver.set_window_size(*DESKTOP)
    driver.get_log("browser")  # drop what earlier tests left
    driver.base_url = live_server.url
    yield driver
    assert_clean(driver)
    # a run started through a page goes on in its own process: it must end first
    from queuecast import background

    assert background.wait_for_runs(180), "a run started by this test had not ended after 180 s"


def assert_clean(driver: Any) -> None:
    """No console error, no failed resource request on the current page."""
    severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert not severe, f"browser console errors: {severe}"
    failed = driver.execute_script(
        "return performance.getEntriesByType('resource')"
        ".filter(function (e) { return e.responseStatus >= 400; })"
        ".map(function (e) { return e.name + ' ' + e.responseStatus; });"
    )
    assert not failed, f"failed asset requests: {failed}"


def shoot(driver: Any, name: str, *, phone: bool = True) -> None:
    """Save the whole page at desktop width (and at phone width) under SCREENSHOTS; at phone
    width nothing may stick out sideways (wide tables scroll inside their own box)."""
    _full_page(driver, DESKTOP, SCREENSHOTS / f"{name}-1280.png")
    if phone:
        _full_page(driver, PHONE, SCREENSHOTS / f"{name}-phone.png")
        width = driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= PHONE[0] + 2, f"{name}: the page is {width}px wide at phone width"
    driver.set_window_size(*DESKTOP)


def _full_page(driver: Any, size: tuple[int, int], path: Path) -> None:
    driver.set_window_size(*size)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(size[0], min(max(size[1], int(height) + 20), MAX_SHOT_HEIGHT))
    driver.save_screenshot(str(path))


@pytest.fixture(autouse=True)
def fast_service_methods(settings):
    """APQ and the seed's rangeSet answer here (the service's default pair, auto and the
    chosen runtime method, costs a minute per fit: tests/service/test_method_choice.py)."""
    settings.QUEUECAST_SERVICE_WAIT_METHOD = "apq"
    settings.QUEUECAST_SERVICE_RUNTIME_METHOD = "rangeset"
