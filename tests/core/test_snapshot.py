"""Snapshots: from_log and from_live agree, and a request's features equal the sweep's row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from predictor.core.state.features import state_features
from predictor.core.state.request import JobRequest, RequestBatch, as_batch
from predictor.core.state.snapshot import (
    LiveJob,
    LogColumns,
    Snapshot,
    censored_history,
    from_live,
    from_log,
)
from predictor.core.state.sweep import compute_state
from tests.conftest import synthetic_log
from traces.core.swf import read_swf


def assert_features_equal_sweep(jobs: pd.DataFrame, rows: np.ndarray) -> None:
    sweep = compute_state(jobs)
    requests = RequestBatch.from_jobs(jobs)
    for i in rows:
        snap = from_log(jobs, jobs["submit_time"].iat[i], machine_procs=128, rows=int(i))
        got = state_features(snap, requests.take([i]))
        np.testing.assert_allclose(got.summary[0], sweep.summary[i], rtol=1e-9, err_msg=f"{i}")
        np.testing.assert_array_equal(got.hist[0], sweep.hist[i], err_msg=f"row {i}")
        assert got.wait_count[0] == sweep.wait_count[i]
        assert got.run_count[0] == sweep.run_count[i]
        for mine, theirs in zip(got.values(0), sweep.hist_values(i), strict=True):
            np.testing.assert_allclose(np.sort(mine), np.sort(theirs))


def test_features_at_every_arrival_equal_the_sweep_row(small_log):
    assert_features_equal_sweep(small_log, np.arange(len(small_log)))


@pytest.mark.realtrace
def test_features_equal_the_sweep_on_a_real_trace_slice(shared_traces):
    jobs = read_swf(shared_traces / "KTH-SP2-1996-2.1-cln.swf.gz").jobs.iloc[:3000]
    assert_features_equal_sweep(jobs.reset_index(drop=True), np.arange(3000))


def as_live(snap: Snapshot) -> list[LiveJob]:
    """The snapshot's jobs as a site's batch system would report them."""
    waiting = [LiveJob(r, "waiting") for r in snap.waiting.requests]
    running = [
        LiveJob(r, "running", elapsed_s=snap.time_s - s, used_procs=int(u))
        for r, s, u in zip(
            snap.running.requests, snap.running.start_s, snap.running.used_procs, strict=True
        )
    ]
    return running[::-1] + waiting[::-1]  # a site lists jobs in any order


def test_from_live_gives_the_same_state_as_from_log_at_the_same_instant(small_log):
    rng = np.random.default_rng(1)
    for t in rng.uniform(0, small_log["submit_time"].max(), 25):
        logged = from_log(small_log, t, machine_procs=128)
        live = from_live(as_live(logged), t, logged.history, machine_procs=128)
        probe = RequestBatch.from_jobs(small_log.iloc[::40]).take(slice(None))
        probe = as_batch([r.at(t) for r in probe])
        a, b = state_features(logged, probe), state_features(live, probe)
        np.testing.assert_allclose(a.summary, b.summary, rtol=1e-12)
        np.testing.assert_array_equal(a.hist, b.hist)
        assert live.free_procs == logged.free_procs
        np.testing.assert_array_equal(live.waiting.requests.job_id, logged.waiting.requests.job_id)


def test_history_hides_what_is_not_known_yet(small_log):
    t = float(small_log["submit_time"].iat[200])
    snap = from_log(small_log, t, machine_procs=128)
    hist = snap.history
    assert (hist["submit_time"] <= t).all()
    start = hist["submit_time"] + hist["wait_time"]
    assert ((hist["wait_time"] < 0) | (start <= t)).all()
    assert ((hist["run_time"] < 0) | (start + hist["run_time"] <= t)).all()
    waiting_ids = set(snap.waiting.requests.job_id.tolist())
    assert (hist.loc[hist["job_id"].isin(waiting_ids), "wait_time"] == -1).all()
    assert np.isinf(snap.waiting.start_s).all()


def test_a_later_known_at_is_rejected(small_log):
    with pytest.raises(ValueError, match="known_at_s"):
        from_log(small_log, 100.0, 200.0, machine_procs=8)


def test_a_running_live_job_needs_its_start():
    job = LiveJob(JobRequest(user=1, procs=2, req_time_s=60, submit_s=0), "running")
    with pytest.raises(ValueError, match="start_s"):
        from_live([job], 10.0, synthetic_log(5), machine_procs=8)


def test_a_delayed_request_sees_the_queue_aged_to_its_arrival(small_log):
    t = float(small_log["submit_time"].iat[150])
    snap = from_log(small_log, t, machine_procs=128)
    req = JobRequest(user=1, procs=4, req_time_s=600, submit_s=t, queue=0)
    now, later = state_features(snap, as_batch([req, req.at(t + 1000)])).summary
    waiting = int(np.sum(snap.waiting.requests.queue == 0))
    running = int(np.sum(snap.running.requests.queue == 0))
    assert later[12] == pytest.approx(now[12] + 1000 * waiting)  # waited so far
    assert later[15] == pytest.approx(now[15] + 1000 * running)  # run so far
    np.testing.assert_array_equal(later[:12], now[:12])


def test_log_columns_give_the_same_snapshot_and_history_is_made_on_first_read(small_log):
    columns = LogColumns.of(small_log)
    for i in (10, 100, len(small_log) - 1):
        t = float(small_log["submit_time"].iat[i])
        plain = from_log(small_log, t, t - 50.0, machine_procs=128, rows=i)
        fast = from_log(small_log, t, t - 50.0, machine_procs=128, rows=i, columns=columns)
        assert "_history" in vars(fast) and callable(vars(fast)["_history"])  # not made yet
        for part in ("waiting", "running"):
            a, b = getattr(plain, part), getattr(fast, part)
            np.testing.assert_array_equal(a.start_s, b.start_s)
            np.testing.assert_array_equal(a.used_procs, b.used_procs)
            np.testing.assert_array_equal(a.requests.procs, b.requests.procs)
            np.testing.assert_array_equal(a.requests.user, b.requests.user)
        pd.testing.assert_frame_equal(fast.history, censored_history(small_log, t - 50.0, i))
        pd.testing.assert_frame_equal(fast.history, plain.history)


def test_a_batch_of_requests_gets_row_for_row_the_features_each_gets_alone(small_log):
    """The histograms of a batch are binned and counted together (all kinds of a side in one
    ``bincount``): each request's row equals the one it gets asked alone, whose values the
    sweep test above pins down, for requests of several users and sizes, some arriving
    later than the snapshot (aged waits)."""
    t = float(small_log["submit_time"].iat[300])
    snap = from_log(small_log, t, machine_procs=128)
    probe = RequestBatch.from_jobs(small_log.iloc[250:330:3]).take(slice(None))
    batch = as_batch([r.at(t + 600.0 * (k % 4)) for k, r in enumerate(probe)])
    got = state_features(snap, batch)
    assert got.hist.shape == (len(batch), 6, 10) and got.hist.dtype == np.float32
    assert len(np.unique(got.hist.reshape(len(batch), -1), axis=0)) > 3  # the rows differ
    for k in range(len(batch)):
        alone = state_features(snap, batch.take([k]))
        np.testing.assert_array_equal(got.hist[k], alone.hist[0], err_msg=f"request {k}")
        np.testing.assert_array_equal(got.summary[k], alone.summary[0])
