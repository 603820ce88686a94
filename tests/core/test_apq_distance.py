"""``normalise_columns`` equals the ``np.divide(..., where=top > 0)`` form it replaced, to the
bit, on the shapes APQ gives it (a tall (m, 6) block, a single column)."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.apq_distance import column_std, normalise_columns


def _with_where(d: np.ndarray) -> np.ndarray:
    top = d.max(axis=0)
    return np.divide(d, top, out=np.zeros_like(d, dtype=float), where=top > 0)


@pytest.mark.parametrize("shape", [(4_000, 6), (1, 6), (257, 1), (3, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normalise_columns_to_the_bit(shape: tuple[int, int], dtype) -> None:
    rng = np.random.default_rng(shape[0])
    d = (rng.lognormal(0, 2, shape) * (rng.random(shape) < 0.7)).astype(dtype)
    if shape[1] > 1:
        d[:, 1] = 0.0  # a column with nothing above 0 is all 0
    got = normalise_columns(d)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, _with_where(d))
    live = d.max(axis=0) > 0
    np.testing.assert_array_equal(got[:, live].max(axis=0), 1.0)


def test_a_column_with_a_nan_is_zero_as_before() -> None:
    d = np.array([[1.0, 2.0], [np.nan, 4.0], [3.0, 0.0]])
    got = normalise_columns(d)
    np.testing.assert_array_equal(got, _with_where(d))
    np.testing.assert_array_equal(got[:, 0], 0.0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_column_std_is_numpys_std_along_the_rows_to_the_bit(n: int) -> None:
    rng = np.random.default_rng(n)
    for m in [1, 2, 7, 128, 129, 1000, 4001, 20_000]:
        for scale in (1.0, 1e-3, 1e6):
            a = rng.random((m, n)) * scale
            a[rng.random((m, n)) < 0.3] = 0.0  # normalised distances: many exact zeros
            assert column_std(a).tobytes() == a.std(axis=0).tobytes()
            f = np.asfortranarray(a)  # summed pairwise by numpy: left to numpy
            assert column_std(f).tobytes() == f.std(axis=0).tobytes()
    a = rng.random((50, n))
    a[3, 0] = np.nan
    assert column_std(a).tobytes() == a.std(axis=0).tobytes()
    assert column_std(np.zeros((0, n))).shape == (n,)
