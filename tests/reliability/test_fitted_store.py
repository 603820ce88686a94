"""One fitted model per trace or site across processes: the on-disk store, its lock, and
the site model that is neither refitted nor counted on every call."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from predictor.services.fitted_cache import FittedCache
from predictor.services.fitted_store import FittedStore


def test_store_round_trips_keeps_the_latest_and_evicts_the_least_recently_used(tmp_path):
    store = FittedStore(tmp_path, max_items=2)
    store.save("site", "1", "0001", {"v": 1})
    store.save("site", "1", "0002", {"v": 2})
    assert store.latest("site", "1") == ("0002", {"v": 2})
    time.sleep(0.01)
    assert store.load("site", "1", "0001") == {"v": 1}  # touched: now the most recent
    time.sleep(0.01)
    store.save("trace", "9", "a", [9])
    assert store.load("site", "1", "0002") is None  # least recently used, evicted
    assert store.load("site", "1", "0001") == {"v": 1}
    assert not list(tmp_path.glob("*.tmp"))  # written to a temporary name, then renamed


def test_store_drops_an_unreadable_file(tmp_path):
    store = FittedStore(tmp_path)
    store.path("trace", "1", "v").write_bytes(b"not a pickle")
    assert store.load("trace", "1", "v") is None
    assert not store.path("trace", "1", "v").exists()


def _hold_lock(directory: str, ready, release) -> None:
    with FittedStore(directory).lock("site", "3"):
        ready.set()
        release.wait(10)


def test_lock_is_single_flight_across_processes(tmp_path):
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    other = ctx.Process(target=_hold_lock, args=(str(tmp_path), ready, release))
    other.start()
    try:
        assert ready.wait(10)
        with FittedStore(tmp_path).lock("site", "3", blocking=False) as got:
            assert got is False  # another process is fitting: do not wait for it
        with FittedStore(tmp_path).lock("site", "4", blocking=False) as got:
            assert got is True  # another key is free
    finally:
        release.set()
        other.join(10)
    with FittedStore(tmp_path).lock("site", "3", blocking=False) as got:
        assert got is True


def _first_prediction(directory: str, log: str) -> None:
    def fit(trace):
        with Path(log).open("a") as f:
            f.write("fit\n")
        time.sleep(0.5)  # every process arrives while it runs
        return {"trace": trace.pk}

    cache = FittedCache(4, fit, store=lambda: FittedStore(directory))
    trace = SimpleNamespace(pk=5, job_count=10, finished_at=None)
    assert cache.get(trace) == {"trace": 5}


@pytest.mark.django_db
def test_four_processes_fit_a_trace_once(tmp_path, settings):
    settings.QUEUECAST_RUN_MEMORY_MB = 0
    log = tmp_path / "fits.log"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_first_prediction, args=(str(tmp_path / "store"), str(log)))
             for _ in range(4)]  # fmt: skip
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert log.read_text().splitlines() == ["fit"]
