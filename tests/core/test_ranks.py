"""Average ranks: scipy's ``rankdata`` numbers and memory layout, and so APQ's weights."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from predictor.core.wait import apq_distance
from predictor.core.wait.ranks import average_ranks


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.strides == b.strides and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", range(5))
def test_the_ranks_are_scipys_to_the_bit_with_ties_and_flat_columns(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 17, 400, 4000):
        x = rng.integers(0, 1 + seed * 7, size=(n, 16)).astype(float)  # many ties
        x[:, 3] = rng.normal(size=n)  # none
        x[:, 5] = 2.5  # one group
        x[:, 7] *= -0.0  # -0.0 beside 0.0: equal
        assert same(average_ranks(x), rankdata(x, axis=0))
        assert same(average_ranks(x[:, 3]), rankdata(x[:, 3]))
        ints = rng.integers(-3, 3, size=n)
        assert same(average_ranks(ints), rankdata(ints))


def test_values_that_are_not_finite_keep_scipys_policy() -> None:
    x = np.array([[1.0, 2.0], [np.nan, 1.0], [3.0, np.inf]])
    np.testing.assert_array_equal(average_ranks(x), rankdata(x, axis=0))
    assert average_ranks(np.zeros((0, 3))).shape == (0, 3)


def test_apqs_weights_are_the_ones_scipys_ranks_give(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(9)
    x = rng.integers(0, 30, size=(2000, 16)).astype(float)
    wait = rng.exponential(3000, 2000).round()
    got = apq_distance.spearman_weights(x, wait, 0.5)
    monkeypatch.setattr(apq_distance, "average_ranks", lambda a: rankdata(a, axis=0))
    assert got.tobytes() == apq_distance.spearman_weights(x, wait, 0.5).tobytes()
