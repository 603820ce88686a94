"""One fitted model per trace or site across processes: the on-disk store, its lock, and
the site model that is neither refitted nor counted on every call."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from predictor.services import fitted_store
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


def test_a_model_fitted_by_other_code_is_never_loaded_and_goes_once_an_hour_old(tmp_path):
    old, new = FittedStore(tmp_path, code="aaaa"), FittedStore(tmp_path, code="bbbb")
    old.save("trace", "1", "0001", {"fitted by": "old code"})
    assert new.load("trace", "1", "0001") is None and new.latest("trace", "1") is None
    assert old.latest("trace", "1") == ("0001", {"fitted by": "old code"})
    new.save("trace", "1", "0001", {"fitted by": "new code"})
    assert old.path("trace", "1", "0001").exists()  # within the grace: an old process may read it
    stale = time.time() - fitted_store.OTHER_CODE_GRACE_S - 1
    os.utime(old.path("trace", "1", "0001"), (stale, stale))
    new.save("trace", "2", "0001", {})
    assert not old.path("trace", "1", "0001").exists()
    assert new.load("trace", "1", "0001") == {"fitted by": "new code"}


def test_the_code_tag_follows_the_source_of_the_pickled_classes(tmp_path):
    assert FittedStore(tmp_path).code == fitted_store.code_tag()
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "model.py").write_text("A = 1\n")
    first = fitted_store.source_digest(tmp_path, ("core",))
    assert fitted_store.source_digest(tmp_path, ("core",)) == first
    (tmp_path / "core" / "model.py").write_text("A = 2\n")
    assert fitted_store.source_digest(tmp_path, ("core",)) != first


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


def test_a_superseding_save_drops_the_older_versions_before_evicting(tmp_path):
    """Without ``supersede`` the older site version stays and the bytes bound evicts the
    trace's model, the least recently used; with it the older version goes first."""
    for supersede, trace_kept in ((False, False), (True, True)):
        d = tmp_path / str(supersede)
        store = FittedStore(d, max_bytes=2500)
        store.save("trace", "1", "a", b"t" * 1000)
        time.sleep(0.01)
        store.save("site", "1", "0001", b"s" * 1000, supersede=supersede)
        time.sleep(0.01)
        store.save("site", "1", "0002", b"S" * 1000, supersede=supersede)
        assert (store.load("trace", "1", "a") is not None) is trace_kept
        assert (store.load("site", "1", "0001") is None) is supersede
        assert store.latest("site", "1") == ("0002", b"S" * 1000)
    other = FittedStore(tmp_path / "True", code="zzzz")  # another code's file is not touched
    other.save("site", "1", "0000", b"o")
    FittedStore(tmp_path / "True").save("site", "1", "0003", b"n", supersede=True)
    assert other.load("site", "1", "0000") == b"o"
