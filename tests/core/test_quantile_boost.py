"""QuantileBoost: scikit-learn's quantile gradient boosting with a faster leaf percentile,
the same floats (predictor.core.runtime.quantile_boost)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from predictor.core.runtime.quantile_boost import QuantileBoost, linear_percentile

PERCENTS = (100 * 0.1, 100 * 0.5, 100 * 0.9, 0.0, 100.0, 37.5, 99.999)


def _same(a: float, b: float) -> bool:
    """Equal floats with the same sign bit, or both NaN."""
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return bool(a == b and np.signbit(a) == np.signbit(b))


def _arrays(rng: np.random.Generator, count: int) -> list[np.ndarray]:
    out = []
    for k in range(count):
        n = int(rng.integers(1, 40)) if k % 5 else int(rng.integers(1, 2000))
        x = rng.normal(size=n) * 10 ** rng.uniform(-3, 3)
        if k % 3 == 1:
            x = np.round(x, 1)  # ties, and -0.0 beside 0.0
        if k % 3 == 2:
            x = rng.integers(-1, 2, size=n).astype(float)
        out.append(x)
    return out


def test_linear_percentile_equals_numpy_bit_for_bit_with_ties_and_signed_zeros():
    rng = np.random.default_rng(0)
    for x in _arrays(rng, 3000):
        before = x.copy()
        for p in PERCENTS:
            assert _same(linear_percentile(x, p), np.percentile(x, p)), (x, p)
        assert np.array_equal(x, before)  # the input is not reordered


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    "x",
    [[3.0], [1.0, np.nan, 3.0], [1.0, np.inf], [-np.inf, np.inf], [-0.0, 0.0], [0.0, -0.0]],
)
def test_linear_percentile_edges_as_numpy(x):
    x = np.array(x)
    for p in PERCENTS:
        assert _same(linear_percentile(x, p), np.percentile(x, p))


def _data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.c_[rng.integers(0, 40, n), rng.integers(0, 4, n), rng.normal(size=n), rng.normal(size=n)]
    x[rng.random(n) < 0.1, 2] = np.nan
    y = np.round(np.log1p(np.exp(rng.normal(5.0, 2.0, n))), 2)  # log runtimes, with ties
    return x, y


def _values(model: HistGradientBoostingRegressor) -> np.ndarray:
    return np.concatenate([p.nodes["value"] for trees in model._predictors for p in trees])


@pytest.mark.parametrize("quantile", [0.1, 0.5, 0.9])
def test_quantile_models_equal_scikit_learns_bit_for_bit(quantile):
    x, y = _data(np.random.default_rng(1), 3000)
    params = {"loss": "quantile", "quantile": quantile, "max_iter": 30, "random_state": 0}
    ours = QuantileBoost(**params).fit(x, y)
    theirs = HistGradientBoostingRegressor(**params).fit(x, y)
    assert np.array_equal(ours._baseline_prediction, theirs._baseline_prediction)
    mine, ref = _values(ours), _values(theirs)
    assert np.array_equal(mine, ref) and np.array_equal(np.signbit(mine), np.signbit(ref))
    assert np.array_equal(ours.predict(x), theirs.predict(x))
    assert type(ours._loss).__name__ == "PinballLeaves"  # the fast leaf update ran


def test_other_losses_and_weights_are_scikit_learns():
    x, y = _data(np.random.default_rng(2), 1000)
    absolute = QuantileBoost(loss="absolute_error", max_iter=10, random_state=0).fit(x, y)
    assert type(absolute._loss).__name__ == "AbsoluteError"
    w = np.random.default_rng(3).random(y.size)
    params = {"loss": "quantile", "quantile": 0.9, "max_iter": 10, "random_state": 0}
    ours = QuantileBoost(**params).fit(x, y, sample_weight=w)
    theirs = HistGradientBoostingRegressor(**params).fit(x, y, sample_weight=w)
    assert np.array_equal(ours.predict(x), theirs.predict(x))
