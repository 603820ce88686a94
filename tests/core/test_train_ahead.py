"""``train_ahead``: every model a prediction would train lazily, in the tuning part or
after it, is trained at once, and the answers are bit for bit the lazy ones (issue 18: no
request trains a model)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from predictor.core.bundle import fit_bundle
from predictor.core.runtime.density import DensityRangeSet
from predictor.core.runtime.history import build_context
from predictor.core.runtime.quantile import QuantileGBRange
from predictor.core.state.request import JobRequest
from predictor.core.state.retrain import (
    all_boundaries,
    boundary,
    later_boundaries,
    row_boundaries,
)
from predictor.core.state.snapshot import from_log
from predictor.core.wait.auto import AutoWait
from predictor.core.wait.gbm import WaitGBM
from predictor.core.wait.registry import make_method
from tests.core.test_runtime_density import PROCS, jobs_with_requests
from tests.core.wait_fakes import make_ctx, make_jobs

KW = {"target_coverage": 0.2, "setpoint_grid": (), "every": 60, "window": 60, "memory": 3}


@pytest.fixture(scope="module")
def density() -> DensityRangeSet:
    """A density method fitted once (blocks of 60 rows), never asked: copy before use."""
    return DensityRangeSet(**KW).fit(build_context(jobs_with_requests(seed=6), PROCS, n_tune=160))


def _no_training(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("a model was trained inside a prediction")

    monkeypatch.setattr(QuantileGBRange, "_train", refuse)
    monkeypatch.setattr(WaitGBM, "_train", refuse)


def _same_rangesets(a, b) -> None:
    assert len(a.ranges) == len(b.ranges)
    for x, y in zip(a.ranges, b.ranges, strict=True):
        for field in ("low_s", "high_s", "probability"):
            assert getattr(x, field).tobytes() == getattr(y, field).tobytes()
        assert (x.point_s, x.level, x.support) == (y.point_s, y.level, y.support)


def test_later_boundaries_are_every_boundary_a_later_target_gets():
    submit = np.arange(1000, dtype=float)
    grid = later_boundaries(1000, 130, 97)
    got = {boundary(n, float(n), submit, 130, 97) for n in range(130, 1000)}
    got |= {boundary(n, float(n) - 0.5, submit, 130, 97) for n in range(131, 1000)}
    assert got == set(grid.tolist())
    with pytest.raises(ValueError, match="every"):
        later_boundaries(10, 2, 0)


def old_boundary(n_before: int, known_at_s: float, submit_s, n_tune: int, every: int) -> int:
    """``boundary`` as it was until stop 52 (each tuning row its own boundary)."""
    step = max(n_before - n_tune, 0) // every
    b = min(n_tune + step * every, n_before)
    while b > 0 and (b >= submit_s.size or submit_s[b] > known_at_s):
        b = b - every if b > n_tune else b - 1
    return max(b, 0)


@pytest.mark.parametrize(("n_tune", "every"), [(130, 97), (200, 50), (97, 97), (0, 40)])
def test_the_tuning_part_has_few_blocks_and_the_rest_is_as_before(n_tune, every):
    """Inside the tuning part the blocks go on backwards from its end: at most
    n_tune / every + 1 models for every tuning target, row or snapshot. A target that had a
    model from after the tuning part keeps it (the old rule, copied above); one that had
    a tuning row's model gets one of the tuning part's blocks."""
    submit = np.repeat(np.arange(500, dtype=float), 2)  # pairs of same-second arrivals
    grid = all_boundaries(1000, n_tune, every)
    assert grid[0] == 0 and np.all(np.diff(grid) > 0)
    assert (grid < n_tune).sum() <= n_tune // every + 1  # the tuning part: few models
    assert set(later_boundaries(1000, n_tune, every)) <= set(grid.tolist())
    got = set()
    for n in range(0, 1000):
        for t in (submit[min(n, 999)], submit[min(n, 999)] - 0.5):
            b = boundary(n, float(t), submit, n_tune, every)
            assert b <= n and (b == 0 or submit[b] <= t)  # never a model from the future
            got.add(b)
            was = old_boundary(n, float(t), submit, n_tune, every)
            assert b == was if was >= n_tune else b < n_tune  # a later model: as before
    assert got <= set(grid.tolist())
    rows = np.arange(1000)
    np.testing.assert_array_equal(
        row_boundaries(rows, n_tune, every),
        [boundary(int(i), float(submit[i]), submit, n_tune, every) for i in rows],
    )


def test_density_trained_ahead_answers_as_the_lazy_one_and_trains_nothing(density, monkeypatch):
    ctx, fitted = density.history_, density
    lazy, ahead = pickle.loads(pickle.dumps(fitted)), pickle.loads(pickle.dumps(fitted))
    ahead.train_ahead()
    assert set(ahead.quantile_._models) == set(all_boundaries(500, 160, ahead.quantile_.every_))
    assert set(ahead._block_lam) == set(range(500 // 60 + 1))
    rows = np.arange(0, 500)  # the tuning part's rows too
    expected = lazy.predict_rows(rows)
    _no_training(monkeypatch)
    _same_rangesets(ahead.predict_rows(rows), expected)
    at = float(ctx.submit_s[420]) + 1.0  # a snapshot between two rows
    request = JobRequest(user=1, group=1, queue=1, procs=8, req_time_s=7200.0, submit_s=at)
    snap = from_log(ctx.jobs, at, machine_procs=PROCS)
    _same_rangesets(ahead.predict(snap, [request]), lazy.predict(snap, [request]))


def test_a_blocks_level_does_not_depend_on_which_blocks_were_asked_first(density):
    in_order = pickle.loads(pickle.dumps(density))
    backwards = pickle.loads(pickle.dumps(density))
    in_order.predict_rows(np.arange(160, 500))  # every block, first to last
    for block in range(8, 1, -1):  # last to first: each block's memory seen cold
        backwards.predict_rows(np.arange(block * 60, block * 60 + 5))
    for block in range(2, 9):
        assert backwards._block_lam[block] == in_order._block_lam[block], block
        assert backwards._block_drift.get(block) == in_order._block_drift.get(block), block


def test_gbm_and_auto_trained_ahead_answer_as_the_lazy_ones(monkeypatch):
    ctx = make_ctx(make_jobs(600, seed=4), n_tune=200)
    gbm = WaitGBM(retrain_every=150, max_iter=30).fit(ctx)
    auto = AutoWait(
        candidates=("median", "gbm", "zero"), safe="median", round_size=5, min_known=10,
        n_validation=80, max_scored=300, make=make_method,
    ).fit(ctx)  # fmt: skip
    rows = np.arange(0, 600, 5)  # the tuning part's rows too
    for fitted in (gbm, auto):
        lazy, ahead = pickle.loads(pickle.dumps(fitted)), pickle.loads(pickle.dumps(fitted))
        ahead.train_ahead()
        expected = lazy.predict_rows(rows).wait_s
        with monkeypatch.context() as m:
            _no_training(m)
            got = ahead.predict_rows(rows).wait_s
        assert got.tobytes() == expected.tobytes()
    ahead_auto = pickle.loads(pickle.dumps(auto)).train_ahead()
    assert ahead_auto._scored_pred.shape[1] == auto.scored_rows_.size  # the whole pool
    assert set(gbm.train_ahead()._models) == set(all_boundaries(600, 200, 150))


def test_without_the_tuning_part_only_the_later_blocks_are_trained(density):
    """``tuning_part=False`` (a live site, asked about "now" only) trains the blocks after the
    tuning part and none before it, through ``auto`` and density to GBM and quantile."""
    ctx = make_ctx(make_jobs(600, seed=4), n_tune=200)
    auto = AutoWait(
        candidates=("gbm", "zero"), safe="gbm", round_size=5, min_known=10,
        n_validation=80, max_scored=300, make=make_method,
    ).fit(ctx)  # fmt: skip
    gbm = auto.train_ahead(tuning_part=False).methods_["gbm"]
    assert set(gbm._models) == set(later_boundaries(600, 200, gbm.retrain_every))
    assert set(all_boundaries(600, 200, gbm.retrain_every)) - set(gbm._models)  # some left
    quantile = pickle.loads(pickle.dumps(density)).train_ahead(tuning_part=False).quantile_
    assert set(quantile._models) == set(later_boundaries(500, 160, quantile.every_))


def test_a_bundle_trained_ahead_answers_any_instant_without_training(monkeypatch):
    jobs = jobs_with_requests(seed=6)
    fitted = fit_bundle(jobs, PROCS, wait_method="gbm", runtime_method="density")
    lazy, ahead = pickle.loads(pickle.dumps(fitted)), pickle.loads(pickle.dumps(fitted))
    ahead.train_ahead()
    submit = jobs["submit_time"].to_numpy(float)
    assert fitted.wait_ctx.n_tune > 40  # the first instant lies in the tuning part
    instants = submit[[40, 150, 260, 499]] + 1.0
    requests = [JobRequest(user=u, group=1, queue=1, procs=p, req_time_s=3600.0, submit_s=t)
                for t in instants for u, p in ((1, 4), (3, 64))]  # fmt: skip
    expected = [lazy.wait.predict(lazy.snapshot(r.submit_s), [r]).wait_s for r in requests]
    runtimes = [lazy.runtime.predict(lazy.snapshot(r.submit_s), [r]) for r in requests]
    _no_training(monkeypatch)
    for r, wait, runtime in zip(requests, expected, runtimes, strict=True):
        snap = ahead.snapshot(r.submit_s)
        assert ahead.wait.predict(snap, [r]).wait_s.tobytes() == wait.tobytes()
        _same_rangesets(ahead.runtime.predict(snap, [r]), runtime)
