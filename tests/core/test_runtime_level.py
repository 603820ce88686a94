"""Density's level steered online to a coverage target: bisection, windows, no look-ahead."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from predictor.core.runtime.choose import dev_split, score
from predictor.core.runtime.density import DensityRangeSet, length_table
from predictor.core.runtime.history import build_context
from predictor.core.runtime.level import (
    block_of,
    feedback_target,
    level_for_coverage,
    window_rows,
)
from predictor.core.runtime.peers import BaselineRange
from predictor.core.runtime.targets import RuntimeTargets
from tests.core.test_runtime_density import PROCS, jobs_with_requests


def test_bisection_keeps_the_lowest_level_whose_coverage_stays_under_the_target():
    def coverage_at(log_lam: float) -> float:  # falls by 10x per decade of level
        return 10.0 ** (-(log_lam + 5.0))

    got = level_for_coverage(coverage_at, 0.2, -7.0, -3.0, steps=12)
    assert coverage_at(got) <= 0.2 < coverage_at(got - 4.0 / 2**11)
    assert level_for_coverage(coverage_at, 1e3, -7.0, -3.0) == -7.0  # all under: the lowest
    assert level_for_coverage(coverage_at, 1e-9, -7.0, -3.0) == -3.0  # none under: the highest
    with pytest.raises(ValueError, match="below"):
        level_for_coverage(coverage_at, 0.2, -3.0, -7.0)


def test_window_rows_are_the_last_positive_rows_before_the_block():
    positive = np.array([1, 0, 1, 1, 0, 1, 1, 1], dtype=bool)
    np.testing.assert_array_equal(window_rows(positive, 6, 3), [2, 3, 5])
    assert window_rows(positive, 0, 3).size == 0
    np.testing.assert_array_equal(window_rows(positive, 8, 5, start_row=4), [5, 6, 7])
    np.testing.assert_array_equal(block_of(np.array([0, 99, 100, 250]), 100), [0, 0, 1, 2])


def test_online_level_meets_the_coverage_target_on_its_window_and_never_looks_ahead():
    jobs = jobs_with_requests(seed=6)
    kw = {"target_coverage": 0.2, "setpoint_grid": (), "every": 100, "window": 150}
    method = DensityRangeSet(**kw).fit(build_context(jobs, PROCS, n_tune=200))
    ctx = method.history_
    rows = np.arange(300, 400)
    method.predict_rows(rows)
    lam = method._block_lam[3]
    window = window_rows(ctx.run_s > 0, 300, 150, ctx.n_tune)  # after the tuning part only
    assert window.min() >= 200
    base = BaselineRange().fit(ctx).predict_rows(window).length_s
    probe = DensityRangeSet(**{**kw, "target_coverage": None}).fit(ctx)
    probe.lam_ = lam
    assert method._block_target[3] == 0.2  # no drift seen yet: the setpoint
    assert score(probe.predict_rows(window), ctx.run_s[window], base).coverage <= 0.2 + 1e-9
    changed = ctx.jobs.copy()  # runtimes from the block on change: its level does not
    changed.loc[changed.index >= 300, "run_time"] = 99999.0
    other = DensityRangeSet(**kw).fit(build_context(changed, PROCS, n_tune=200))
    other.predict_rows(rows)
    assert other._block_lam[3] == lam


def test_length_table_gives_the_summed_length_of_the_rangesets_at_every_level():
    method = DensityRangeSet(target_coverage=None).fit(
        build_context(jobs_with_requests(seed=7), PROCS, n_tune=200)
    )
    ctx = method.history_
    rows = np.arange(200, len(ctx.run_s), 3)
    mix = method._mixtures(ctx, RuntimeTargets.from_rows(ctx, rows), method.quantile_)
    table = length_table(mix)
    for log_lam in (-7.0, -5.0, -4.0, -3.0, -1.0):
        lam = 10.0**log_lam
        want = sum(method._rangeset(pc, lv, n, lam, req).length_s for pc, lv, n, req in mix)
        assert table.length_at(lam) == pytest.approx(want, rel=1e-9)


def test_feedback_target_takes_the_mean_drift_off_the_setpoint_within_the_ceiling():
    assert feedback_target(0.24, [], 0.25) == 0.24
    assert feedback_target(0.24, [0.01, 0.03], 0.25) == pytest.approx(0.22)
    assert feedback_target(0.24, [-0.005], 0.25) == pytest.approx(0.245)
    assert feedback_target(0.24, [-0.05], 0.25) == 0.25  # a steady undershoot: at most the ceiling
    assert feedback_target(0.24, [0.5], 0.25) == 0.0


def _window_coverage(method: DensityRangeSet, block: int, lam: float) -> float:
    """Coverage of the window before ``block`` answered at ``lam`` (jobs with a baseline)."""
    ctx = method.history_
    rows = window_rows(ctx.run_s > 0, block * method.every, method.window, ctx.n_tune)
    base = BaselineRange().fit(ctx).predict_rows(rows).length_s
    rows, base = rows[base > 0], base[base > 0]
    probe = DensityRangeSet(target_coverage=None).fit(ctx)
    probe.lam_ = lam
    return score(probe.predict_rows(rows), ctx.run_s[rows], base).coverage


def test_block_target_is_the_setpoint_less_the_mean_drift_seen_before_the_block():
    jobs = jobs_with_requests(seed=6)
    kw = {"target_coverage": 0.2, "setpoint_grid": (), "every": 80, "window": 80, "memory": 3}
    method = DensityRangeSet(**kw).fit(build_context(jobs, PROCS, n_tune=160))
    rows = np.arange(480, 500)
    method.predict_rows(rows)  # block 6 alone: blocks 3..6 observed cold
    u = method._block_u
    drifts = [_window_coverage(method, k, u[k - 1]) - 0.2 for k in (4, 5, 6)]
    assert [method._block_drift[k] for k in (4, 5, 6)] == pytest.approx(drifts, abs=1e-9)
    target = method._block_target[6]
    assert target == pytest.approx(min(max(0.2 - np.mean(drifts), 0.0), 0.25))
    assert _window_coverage(method, 6, method._block_lam[6]) <= target + 1e-9
    in_order = DensityRangeSet(**kw).fit(build_context(jobs, PROCS, n_tune=160))
    in_order.predict_rows(np.arange(240, 500))  # blocks 3..6 one after another: same level
    assert in_order._block_lam[6] == method._block_lam[6]
    changed = method.history_.jobs.copy()  # runtimes from the block on change: nothing moves
    changed.loc[changed.index >= 480, "run_time"] = 99999.0
    other = DensityRangeSet(**kw).fit(build_context(changed, PROCS, n_tune=160))
    other.predict_rows(rows)
    assert other._block_lam[6] == method._block_lam[6]


def test_a_model_pickled_before_the_feedback_keeps_answering_with_the_setpoint_alone():
    kw = {"target_coverage": 0.2, "setpoint_grid": (), "every": 80, "window": 80}
    method = DensityRangeSet(**kw).fit(build_context(jobs_with_requests(seed=6), PROCS, n_tune=160))
    new_fields = ("memory", "_block_u", "_block_drift", "_block_target")
    new_fields += ("setpoint_grid", "setpoint_", "_windows")
    old = {k: v for k, v in copy.deepcopy(method.__dict__).items() if k not in new_fields}
    assert pickle.loads(pickle.dumps(method)).memory == 5  # a round trip keeps the new fields
    legacy = DensityRangeSet.__new__(DensityRangeSet)
    legacy.__setstate__(old)
    rows = np.arange(480, 500)
    legacy.predict_rows(rows)
    method.predict_rows(rows)
    assert legacy.memory == 0 and legacy._block_target[6] == 0.2
    assert method._block_target[6] != 0.2  # the same log with the feedback: drifts seen


def _dev_coverage(method: DensityRangeSet, ctx, setpoint: float) -> float:
    """Coverage on the dev jobs of the online rule at ``setpoint``, fitted on the dev split."""
    dev_ctx, rows = dev_split(ctx, method.max_dev)
    base = BaselineRange().fit(dev_ctx).predict_rows(rows).length_s
    kw = {k: getattr(method, k) for k in ("every", "window", "memory", "max_coverage")}
    kw["weights"], kw["fit_weights"] = method.mix_weights(), False  # the dev jobs' weights
    probe = DensityRangeSet(target_coverage=setpoint, setpoint_grid=(), **kw).fit(dev_ctx)
    probe.lam_ = method.lam_  # the dev jobs' level where no window is known yet
    return score(probe.predict_rows(rows), ctx.run_s[rows], base).coverage


def test_the_setpoint_is_the_largest_of_the_grid_whose_dev_coverage_stays_under_the_ceiling():
    jobs = jobs_with_requests(seed=6)
    grid = (0.1, 0.2, 0.3, 0.4)
    kw = {"every": 50, "window": 60, "max_coverage": 0.3, "setpoint_grid": grid}
    ctx = build_context(jobs, PROCS, n_tune=300)
    method = DensityRangeSet(**kw).fit(ctx)
    cov = [_dev_coverage(method, ctx, s) for s in grid]
    assert cov == sorted(cov) and cov[0] < cov[-1]  # the grid moves the dev coverage
    want = max((s for s, c in zip(grid, cov, strict=True) if c <= 0.3), default=grid[0])
    assert method.setpoint_ == want
    assert method.fitted_info()["setpoint_dev_coverage"] == pytest.approx(
        cov[grid.index(want)], abs=1e-4
    )
    changed = ctx.jobs.copy()  # the test part's runtimes change: the setpoint does not
    changed.loc[changed.index >= 300, "run_time"] = 99999.0
    assert DensityRangeSet(**kw).fit(build_context(changed, PROCS, n_tune=300)).setpoint_ == want
    fixed = DensityRangeSet(**{**kw, "setpoint_grid": ()}).fit(ctx)
    assert fixed.setpoint_ == fixed.target_coverage == 0.24
