"""Per-instant work once for every process (issue 18): a stored bundle is trained ahead, so no
request trains a model, and a past instant's recent-error pool is predicted by one process
and read from the store by the others (``predictor.services.shared_rows``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from predictor.core.answer_accuracy import runtime_accuracy_at
from predictor.core.runtime.quantile import QuantileGBRange
from predictor.core.wait.gbm import WaitGBM
from predictor.core.wait.row_memo import RowWaitMemo
from predictor.services import predict as predict_service
from predictor.services import shared_rows
from predictor.services.fitted_cache import store_key
from predictor.services.fitted_store import FittedStore, default_store
from tests.service.traces_support import demo_trace

pytestmark = pytest.mark.django_db


@pytest.fixture
def trace(tmp_path: Path):
    predict_service.BUNDLES.clear()
    return demo_trace(tmp_path)


def query(trace, share: float, user: int = 2) -> dict:
    at = trace.first_submit_s + share * (trace.last_submit_s - trace.first_submit_s)
    return {"user_id": user, "group_id": 1, "queue_id": 1, "requested_procs": 8,
            "requested_time": 3600.0, "at": at}  # fmt: skip


def scorer_of(trace):
    return predict_service.bundle_for(trace, block=True).__dict__["_recent_scorer"]


def test_a_second_process_reads_an_instants_pool_from_the_store(trace):
    first = predict_service.predict_wait(trace, query(trace, 0.7))
    predicted = scorer_of(trace).memo.predicted
    assert predicted > 0  # the first process predicted the instant's pool ...
    stored = default_store().load("rows", *store_key(trace))
    assert stored is not None and stored["known"].sum() == predicted  # ... and stored it
    predict_service.BUNDLES.clear()  # another process: the bundle from the store, no memo
    again = predict_service.predict_wait(trace, query(trace, 0.7, user=3))
    assert scorer_of(trace).memo.predicted == 0  # nothing predicted: read from the store
    for key in ("recent_aae_s", "recent_jobs", "recent_mean_wait_s"):
        assert again[key] == first[key]
    later = predict_service.predict_wait(trace, query(trace, 0.9))  # a new instant: merged
    assert later["recent_jobs"] > 0
    merged = default_store().load("rows", *store_key(trace))
    assert merged["known"].sum() == predicted + scorer_of(trace).memo.predicted


def test_a_second_process_reads_the_runtime_accuracy_at_an_instant_from_the_store(
    trace, monkeypatch
):
    first = predict_service.predict_wait(trace, query(trace, 0.8))
    predict_service.BUNDLES.clear()  # another process

    def refuse(*args, **kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(predict_service, "kept_runtime_accuracy_at", refuse)
    again = predict_service.predict_wait(trace, query(trace, 0.8, user=3))
    assert again["accuracy"]["runtime"] == first["accuracy"]["runtime"]
    with pytest.raises(AssertionError, match="computed again"):  # a new instant computes it
        predict_service.predict_wait(trace, query(trace, 0.95))


def runtime_scores_of(trace):
    return predict_service.bundle_for(trace, block=True).__dict__["_runtime_row_scores"]


def test_a_new_instant_scores_only_the_jobs_that_ended_since_and_stores_them(trace):
    """The runtime accuracy's per-row terms are kept across instants and processes: a later
    instant answers the jobs that ended in between only, another process reads them all
    from the store, and every figure equals the per-instant computation's."""
    bundle = predict_service.bundle_for(trace, block=True)
    ctx = bundle.runtime_ctx
    early, late = query(trace, 0.80), query(trace, 0.83)
    first = predict_service.predict_wait(trace, early)
    scored = runtime_scores_of(trace).predicted
    assert scored == predict_service.RUNTIME_RECENT  # the instant's 100 jobs
    second = predict_service.predict_wait(trace, late)
    new = runtime_scores_of(trace).predicted - scored
    ended_between = ctx.ended_by(late["at"]) - ctx.ended_by(early["at"])
    assert 0 < new <= ended_between < predict_service.RUNTIME_RECENT  # not 100 again
    for q, body in ((early, first), (late, second)):  # the per-instant computation's figures
        plain = runtime_accuracy_at(bundle.runtime, ctx, q["at"], predict_service.RUNTIME_RECENT)
        assert body["accuracy"]["runtime"] == predict_service._clean(plain.as_dict())
    stored = default_store().load("runtime_rows-trace", *store_key(trace))
    assert stored["known"].sum() == scored + new
    predict_service.BUNDLES.clear()  # another process, at a third instant within the two
    predict_service.predict_wait(trace, query(trace, 0.815))
    assert runtime_scores_of(trace).predicted == 0  # every row it needed was stored


def test_per_instant_files_do_not_push_the_models_out_of_the_store(tmp_path: Path):
    store = FittedStore(tmp_path, max_items=2)
    store.save("trace", "1", "v", {"model": 1})
    store.save("trace", "2", "v", {"model": 2})
    for k in range(5):
        store.save("rows", str(k), "v", {"values": k})
        store.save("runtime_accuracy-trace", str(k), "v", {k: k})
    assert store.load("trace", "1", "v") == {"model": 1}  # both models kept
    assert store.load("trace", "2", "v") == {"model": 2}
    store.save("trace", "3", "v", {"model": 3})
    assert sum(store.load("trace", k, "v") is not None for k in "123") == 2  # still bounded


def test_merging_keeps_the_rows_of_both_processes(tmp_path: Path):
    store = FittedStore(tmp_path)

    class Fixed:  # a method whose row answer is the row number
        def predict_rows(self, rows):
            return type("P", (), {"wait_s": np.asarray(rows, dtype=float) * 10})()

    a, b = RowWaitMemo(Fixed(), 50), RowWaitMemo(Fixed(), 50)
    a.wait_s(np.arange(0, 20))
    b.wait_s(np.arange(15, 40))
    shared_rows.merge_into_store(store, "t", "v1", a)
    shared_rows.merge_into_store(store, "t", "v1", b)  # b never saw a's rows
    stored = store.load("rows", "t", "v1")
    np.testing.assert_array_equal(np.flatnonzero(stored["known"]), np.arange(0, 40))
    np.testing.assert_array_equal(stored["values"][:40], np.arange(0, 40) * 10.0)
    fresh = RowWaitMemo(Fixed(), 50)
    assert shared_rows.read_into(store, "t", "v1", fresh) == 40
    assert fresh.wait_s(np.arange(0, 40)).tolist() == (np.arange(0, 40) * 10.0).tolist()
    assert fresh.predicted == 0
    assert shared_rows.read_into(store, "t", "v1", RowWaitMemo(Fixed(), 49)) == 0  # other log


def test_a_stored_bundle_answers_a_new_instant_without_training_a_model(
    trace, settings, monkeypatch
):
    settings.QUEUECAST_SERVICE_WAIT_METHOD = "gbm"  # both retrain models per row block
    settings.QUEUECAST_SERVICE_RUNTIME_METHOD = "quantile"
    predict_service.bundle_for(trace, block=True)  # the background fit's work, stored
    predict_service.BUNDLES.clear()  # a web process: loads it

    def refuse(*args, **kwargs):
        raise AssertionError("a request trained a model")

    monkeypatch.setattr(QuantileGBRange, "_train", refuse)
    monkeypatch.setattr(WaitGBM, "_train", refuse)
    # Late first, then instants whose pools (their 300 last started jobs) reach into the
    # tuning part, or lie in it (its rows' models are trained ahead in blocks too).
    n_tune = predict_service.bundle_for(trace).wait_ctx.n_tune
    for share in (0.99, 0.88, 0.93, 0.5, 0.1):
        body = predict_service.predict_wait(trace, query(trace, share))
        assert body["runtime_method"] == "quantile" and body["wait_s"] >= 0
        kept = scorer_of(trace).cache
        pool = kept.get(kept.keys()[-1])
        assert pool is not None and pool.rows.size > 0
    assert pool.rows.max() < n_tune  # the last instant's pool: tuning rows only


def test_a_process_reads_the_per_instant_file_once_for_the_instants_it_holds(tmp_path: Path):
    """A miss copies every stored instant into the process's own copy; later asks for any of
    them (or for one this process computed) read no file (issue 18: unpickling the whole file
    per request cost half of a warm answer)."""
    store = FittedStore(tmp_path)
    for k in range(3):  # another process stored three instants
        shared_rows.shared_value(store, "acc", "t", "v", k, lambda k=k: k * 10)
    loads = []
    real_load = store.load
    store.load = lambda *a: loads.append(a) or real_load(*a)  # type: ignore[method-assign]

    def refuse():
        raise AssertionError("computed again")

    local: dict = {}
    assert shared_rows.shared_value(store, "acc", "t", "v", 1, refuse, local) == 10
    assert len(loads) == 1 and local == {0: 0, 1: 10, 2: 20}
    assert shared_rows.shared_value(store, "acc", "t", "v", 2, refuse, local) == 20
    assert len(loads) == 1  # held: no file read
    assert shared_rows.shared_value(store, "acc", "t", "v", 7, lambda: 70, local) == 70
    assert local[7] == 70 and real_load("acc", "t", "v")[7] == 70  # computed, stored, held
    loads.clear()
    assert shared_rows.shared_value(store, "acc", "t", "v", 7, refuse, local) == 70
    assert loads == []


def test_the_process_copy_is_bounded_like_the_file(monkeypatch):
    monkeypatch.setattr(shared_rows, "SHARED_VALUES", 3)
    local: dict = {}
    shared_rows.keep(local, {k: k for k in range(5)})
    assert list(local) == [2, 3, 4]  # the oldest went first
