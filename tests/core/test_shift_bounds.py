"""The relative shift's lowest, highest and median runtime by one sort of the factors: the
floats of the full (H, F) values and their three reductions, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.runtime.rangeset import shifted_bounds, shifted_values
from predictor.core.runtime.shift_bounds import relative_bounds


def full(r, loads, target, slopes, intercepts):
    values = shifted_values(r, loads, target, slopes, intercepts, "relative")
    return values.min(axis=1), values.max(axis=1), np.median(values, axis=1)


def same(a, b) -> bool:
    return all(x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("n_functions", [1, 2, 5, 24, 25])
def test_the_bounds_are_the_full_values_floats(n_functions: int) -> None:
    rng = np.random.default_rng(n_functions)
    for _ in range(40):
        h = int(rng.integers(1, 500))
        r = np.round(rng.exponential(3000, h)) * rng.choice([1.0, 0.0], h, p=[0.9, 0.1])
        loads = rng.uniform(-0.2, 1.2, h)
        loads[rng.random(h) < 0.05] = np.nan  # an unknown load: every factor is 1
        slopes = rng.normal(0, 3000, n_functions)
        intercepts = rng.normal(1000, 2000, n_functions)  # some f(L) <= 0: factor 1
        target = float(rng.uniform(0, 1))
        got = relative_bounds(r, loads, target, slopes, intercepts)
        assert got is not None
        assert same(got, full(r, loads, target, slopes, intercepts))


def test_ties_and_repeated_functions_give_the_same_median() -> None:
    r = np.array([100.0, 0.0, 7.0])
    loads = np.array([0.5, 0.2, 0.9])
    slopes = np.array([10.0, 10.0, -5.0, 0.0])  # a repeated function, even count
    intercepts = np.array([50.0, 50.0, 40.0, 1.0])
    got = relative_bounds(r, loads, 0.5, slopes, intercepts)
    assert got is not None and same(got, full(r, loads, 0.5, slopes, intercepts))


def test_where_the_sort_cannot_stand_for_the_values_the_caller_builds_them() -> None:
    slopes, intercepts = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0])
    negative = np.array([-5.0, 10.0])
    assert relative_bounds(negative, np.array([0.1, 0.2]), 0.5, slopes, intercepts) is None
    huge = np.array([np.inf, 1.0, 1.0])  # inf / inf: a NaN factor
    assert relative_bounds(np.array([10.0]), np.array([np.inf]), np.inf, huge, huge) is None
    assert relative_bounds(np.array([10.0]), np.array([0.1]), 0.5, np.zeros(0), np.zeros(0)) is None
    for runtimes, loads in ((negative, np.array([0.1, 0.2])), (np.array([10.0]), np.array([0.1]))):
        got = shifted_bounds(runtimes, loads, 0.5, (slopes, intercepts), "relative")
        assert same(got, full(runtimes, loads, 0.5, slopes, intercepts))


def test_the_additive_shift_keeps_the_full_values() -> None:
    r, loads = np.array([100.0, 40.0]), np.array([0.2, 0.8])
    slopes = np.array([50.0, -20.0, 5.0])
    values = shifted_values(r, loads, 0.6, slopes, None, "additive")
    got = shifted_bounds(r, loads, 0.6, (slopes, None), "additive")  # type: ignore[arg-type]
    assert same(got, (values.min(axis=1), values.max(axis=1), np.median(values, axis=1)))
