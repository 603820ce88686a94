"""The flattened trees answer exactly what scikit-learn's ``predict`` answers
(``predictor.core.gbm_trees``)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from predictor.core import gbm_trees


def _data(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 8))
    x[rng.random(x.shape) < 0.15] = np.nan  # missing values go left or right per split
    x[:, 5] = np.round(x[:, 5])  # ties with the thresholds
    y = np.nansum(x[:, :3], axis=1) ** 2 + rng.exponential(size=n)
    return x, y


@pytest.mark.parametrize(
    "params",
    [{"loss": "quantile", "quantile": 0.1}, {"loss": "quantile", "quantile": 0.9},
     {"loss": "absolute_error", "learning_rate": 0.05, "max_iter": 150}],
)  # fmt: skip
def test_flat_trees_give_scikit_learns_answer_bit_for_bit(params) -> None:
    x, y = _data(0, 2000)
    model = HistGradientBoostingRegressor(random_state=0, **params).fit(x, y)
    flat = gbm_trees.flatten(model)
    assert flat is not None and flat.roots.size == model.n_iter_
    targets, _ = _data(1, 400)
    targets = np.vstack([targets, x[:50]])  # rows seen in training hit thresholds exactly
    want = model.predict(targets)
    assert np.array_equal(flat.predict(targets), want)
    for n in (1, 2, gbm_trees.SMALL_BATCH, gbm_trees.SMALL_BATCH + 1):
        assert np.array_equal(gbm_trees.predict(model, targets[:n], limits=1), want[:n])


def test_a_model_with_a_categorical_split_is_left_to_scikit_learn() -> None:
    x, y = _data(2, 1000)
    x[:, 0] = np.abs(np.round(np.nan_to_num(x[:, 0]) * 3)) % 5
    y = y + 10 * (x[:, 0] == 2)
    model = HistGradientBoostingRegressor(categorical_features=[0], random_state=0).fit(x, y)
    assert gbm_trees.flatten(model) is None
    assert np.array_equal(gbm_trees.predict(model, x[:3], limits=1), model.predict(x[:3]))


def test_several_models_walked_together_give_each_models_answer_bit_for_bit() -> None:
    """``predict_all``: the quantile method's models (different sizes, missing values) walked
    as one forest answer exactly what each answers alone, below and above SMALL_BATCH."""
    x, y = _data(3, 2000)
    models = [
        HistGradientBoostingRegressor(loss="quantile", quantile=q, max_iter=it, random_state=0)
        .fit(x, y)
        for q, it in ((0.1, 60), (0.5, 100), (0.9, 30))
    ]  # fmt: skip
    targets, _ = _data(4, 300)
    targets = np.vstack([targets, x[:40]])
    want = np.array([m.predict(targets) for m in models])
    for n in (1, 5, gbm_trees.SMALL_BATCH, gbm_trees.SMALL_BATCH + 1):
        got = gbm_trees.predict_all(models, targets[:n], limits=1)
        assert got.shape == (3, n) and np.array_equal(got, want[:, :n])
    for lo in range(0, 300, 7):  # many small batches through the one cached forest
        assert np.array_equal(
            gbm_trees.predict_all(models, targets[lo : lo + 3]), want[:, lo : lo + 3]
        )
