"""IBL: heterogeneous distance, Gaussian kernel, tuning on the tuning part only, no look-ahead."""

from __future__ import annotations

import numpy as np

from predictor.core.wait.baselines import ZeroWait
from predictor.core.wait.ibl import DAY_S, IBL, kernel_average, unit_distances, unit_distances_batch
from tests.core.wait_fakes import make_ctx, make_jobs


def test_unit_distances_mix_overlap_range_and_time_of_day():
    # columns: one nominal, one numeric, time of day (column 2)
    window = np.array([[1.0, 0.0, 0.0], [2.0, 10.0, 86000.0]])
    x = np.array([1.0, 5.0, 400.0])
    d = unit_distances(window, x, n_nominal=1, tod_col=2)
    np.testing.assert_allclose(d[:, 0], [0.0, 1.0])  # same user / other user
    np.testing.assert_allclose(d[:, 1], [0.5, 0.5])  # |5-0|/10, |5-10|/10
    np.testing.assert_allclose(d[:, 2], [400 / 43200, 800 / 43200])  # wraps past midnight


def test_constant_numeric_attribute_has_distance_zero():
    window = np.array([[1.0, 3.0, 0.0], [1.0, 3.0, 0.0]])
    d = unit_distances(window, np.array([1.0, 3.0, 0.0]), n_nominal=1, tod_col=2)
    assert np.all(d == 0)


def test_kernel_average_weights_near_jobs_more():
    d2 = np.array([0.0, 0.01, 4.0])
    waits = np.array([100.0, 200.0, 10_000.0])
    assert kernel_average(d2, waits, k=1, h=1.0) == 100.0
    two = kernel_average(d2, waits, k=2, h=1.0)
    expected = (100 + 200 * np.exp(-0.01)) / (1 + np.exp(-0.01))
    assert np.isclose(two, expected)
    assert kernel_average(d2, waits, k=3, h=0.1) < 200.0  # the far job is out of reach


def test_kernel_average_falls_back_to_nearest_when_all_weights_underflow():
    assert kernel_average(np.array([9.0, 4.0]), np.array([1.0, 7.0]), k=2, h=1e-3) == 7.0


def _user_driven_trace():
    jobs = make_jobs(1500, seed=5)
    jobs["wait_time"] = 1000.0 * jobs["user_id"]
    return jobs


def test_ibl_learns_a_wait_that_depends_on_the_user():
    jobs = _user_driven_trace()
    ctx = make_ctx(jobs, n_tune=500)
    targets = np.arange(600, 1500, 3)
    ibl = IBL(n_iter=15, tune_targets=80, history_size=500).fit(ctx)
    actual = jobs["wait_time"].to_numpy()[targets]
    ibl_err = np.mean(np.abs(ibl.predict_rows(targets).wait_s - actual))
    zero_err = np.mean(np.abs(ZeroWait().fit(ctx).predict_rows(targets).wait_s - actual))
    assert ibl_err < 0.3 * zero_err


def test_tuning_uses_only_the_tuning_part_and_the_seed():
    jobs = make_jobs(900)
    a = IBL(n_iter=8, tune_targets=50, random_state=1).fit(make_ctx(jobs, n_tune=300))
    changed = jobs.copy()
    changed.loc[300:, "wait_time"] *= 7  # the test part only
    b = IBL(n_iter=8, tune_targets=50, random_state=1).fit(make_ctx(changed, n_tune=300))
    np.testing.assert_array_equal(a.weights_, b.weights_)
    assert (a.k_, a.h_) == (b.k_, b.h_)


def test_changing_a_later_job_leaves_earlier_predictions_unchanged():
    jobs = make_jobs(900)
    ctx = make_ctx(jobs, n_tune=300)
    ibl = IBL(n_iter=5, tune_targets=40).fit(ctx)
    targets = np.arange(300, 600)
    before = ibl.predict_rows(targets).wait_s
    later = jobs.copy()
    later.loc[600:, "wait_time"] = 1e7
    later.loc[600:, "user_id"] = 99
    after = (
        IBL(n_iter=5, tune_targets=40).fit(make_ctx(later, n_tune=300)).predict_rows(targets).wait_s
    )
    np.testing.assert_array_equal(before, after)


def old_unit_distances(window, x, n_nominal, tod_col):
    """The one-target formula the batch replaced, kept as the reference."""
    diff = np.abs(window - x)
    nominal = (diff[:, :n_nominal] > 0).astype(float)
    numeric = diff[:, n_nominal:]
    span = np.maximum(window[:, n_nominal:].max(axis=0), x[n_nominal:]) - np.minimum(
        window[:, n_nominal:].min(axis=0), x[n_nominal:]
    )
    numeric = np.divide(numeric, span, out=np.zeros_like(numeric), where=span > 0)
    t = tod_col - n_nominal
    numeric[:, t] = np.minimum(diff[:, tod_col], DAY_S - diff[:, tod_col]) / (DAY_S / 2)
    return np.concatenate([nominal, numeric], axis=1)


def random_window(rng: np.random.Generator, m: int) -> np.ndarray:
    """(m, 14): 4 nominal columns, 3 numeric, time of day (column 7), 6 numeric; column 9
    flat (its distance is 0)."""
    parts = [rng.integers(0, 3, (m, 4)), rng.exponential(5.0, (m, 3))]
    parts += [rng.uniform(0, DAY_S, m), rng.exponential(2.0, (m, 6))]
    window = np.column_stack(parts)
    window[:, 9] = 1.0
    return window


def test_batched_distances_equal_the_one_target_formula_bit_for_bit():
    rng = np.random.default_rng(5)
    window = random_window(rng, 500)
    xs = window[rng.choice(500, 7)] + rng.normal(0, 0.1, (7, window.shape[1]))
    xs[:, 9] = 1.0
    batch = unit_distances_batch(window, xs, 4, 7)
    wn = rng.uniform(size=window.shape[1])
    for k, x in enumerate(xs):
        old = old_unit_distances(window, x, 4, 7)
        np.testing.assert_array_equal(batch[k], old)
        np.testing.assert_array_equal((batch[k] * batch[k]) @ wn, (old * old) @ wn)


def test_window_ranges_from_block_extremes_are_the_windows_own_and_a_refit_forgets_them():
    from predictor.core.wait.ibl import window_range

    jobs = make_jobs(500, seed=3)
    ibl = IBL(n_iter=4, tune_targets=40, random_state=0, history_size=150)
    ibl.fit(make_ctx(jobs, n_tune=200))
    rows = np.arange(300, 500)
    first = ibl.predict_rows(rows).wait_s
    for m in range(1, len(ibl.hfeats_) + 1):
        lo, hi = window_range(ibl.hfeats_[ibl._window(m)], 4)
        assert ibl._ranges(m)[0].tobytes() == lo.tobytes()
        assert ibl._ranges(m)[1].tobytes() == hi.tobytes()
    # a refit on another log (same order and windows, other sizes) answers as a new IBL
    # fitted on it: no extreme of the old log is kept
    other = jobs.copy()
    other["requested_time"] = other["requested_time"] * 3 + 7
    ibl.fit(make_ctx(other, n_tune=200))
    new = IBL(n_iter=4, tune_targets=40, random_state=0, history_size=150)
    new.fit(make_ctx(other, n_tune=200))
    assert ibl.predict_rows(rows).wait_s.tobytes() == new.predict_rows(rows).wait_s.tobytes()
    assert ibl.predict_rows(rows).wait_s.tobytes() != first.tobytes()
    import pickle

    assert "_extremes" in ibl.__dict__
    back = pickle.loads(pickle.dumps(ibl))
    assert "_extremes" not in back.__dict__
    assert back.predict_rows(rows).wait_s.tobytes() == new.predict_rows(rows).wait_s.tobytes()


def test_squared_distances_of_candidates_equal_the_batch_bit_for_bit():
    from predictor.core.wait.ibl import squared_distances_each

    rng = np.random.default_rng(8)
    window = random_window(rng, 700)
    # a molding arrival: one request at 6 sizes (column 4), two state sums that follow it,
    # one target at another user and one beyond the window's range (its span widens)
    xs = np.repeat(window[[17]], 8, axis=0)
    xs[:, 4] = np.log1p([1, 2, 4, 8, 16, 32, 64, 128])
    xs[:, 11] += np.arange(8) * 0.25
    xs[6, 0] = 2.0 if xs[6, 0] != 2.0 else 1.0
    xs[7, 5] = 1e3
    wn = rng.uniform(size=window.shape[1])
    wn /= wn.sum()
    batch = unit_distances_batch(window, xs, 4, 7)
    got = list(squared_distances_each(window, xs, 4, 7, wn))
    assert len(got) == len(xs)
    for d, d2 in zip(batch, got, strict=True):
        assert d2.tobytes() == ((d * d) @ wn).tobytes()


def test_squared_unit_distances_equal_the_batch_squared_bit_for_bit():
    from predictor.core.wait.ibl import squared_unit_distances, window_range

    rng = np.random.default_rng(11)
    window = random_window(rng, 600)  # column 9 flat
    xs = window[rng.choice(600, 6)] + rng.normal(0, 0.1, (6, window.shape[1]))
    xs[:, 9] = 1.0
    xs[1, 5] = 1e3  # beyond the window's range: the span widens
    xs[2, 9] = 4.0  # a flat column the target widens
    xs[3, :4] = window[0, :4]  # every nominal column equal to a row's
    ranges = window_range(window, 4)
    for k, x in enumerate(xs):
        d = unit_distances_batch(window, xs[k : k + 1], 4, 7)[0]
        for got in (
            squared_unit_distances(window, x, 4, 7),
            squared_unit_distances(window, x, 4, 7, ranges),
        ):
            assert got.tobytes() == (d * d).tobytes() == (d**2).tobytes()


def test_ibl_tuning_with_the_in_place_squares_chooses_as_the_batch_did(monkeypatch):
    from predictor.core.wait import ibl as ibl_module

    jobs = make_jobs(500, seed=4)
    fitted = IBL(n_iter=12, tune_targets=60, random_state=1, history_size=200)
    fitted.fit(make_ctx(jobs, n_tune=300))

    def batch_squared(self, x, m):  # the formula before: the batch's distances, squared
        window = self.hfeats_[self._window(m)]
        return unit_distances(window, x, self.n_nominal_, self.tod_col_, self._ranges(m)) ** 2

    monkeypatch.setattr(ibl_module.IBL, "_squared", batch_squared)
    before = IBL(n_iter=12, tune_targets=60, random_state=1, history_size=200)
    before.fit(make_ctx(jobs, n_tune=300))
    assert fitted.tune_aae_ == before.tune_aae_
    assert fitted.weights_.tobytes() == before.weights_.tobytes()
    assert (fitted.k_, fitted.h_) == (before.k_, before.h_)
    rows = np.arange(300, 500)
    assert fitted.predict_rows(rows).wait_s.tobytes() == before.predict_rows(rows).wait_s.tobytes()
