"""The state histograms' sums: ``sum_last_axis`` equals numpy's own ``sum(axis=-1)`` to the bit,
so APQ's chi-square distances (``chi2_fixed``) are the ones numpy's sum gave."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.state import histograms as hg
from predictor.core.state.histograms import chi2_fixed, sum_last_axis


@pytest.mark.parametrize("n", [1, 3, 7, 8, 9, 10, 15, 16, 17, 24, 31, 100, 128, 129])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_last_axis_is_numpys_sum_to_the_bit(n: int, dtype) -> None:
    rng = np.random.default_rng(n)
    x = (rng.lognormal(0, 3, (500, 6, n)) * rng.choice([-1, 1], (500, 6, n))).astype(dtype)
    x[rng.random(x.shape) < 0.3] = 0
    got = sum_last_axis(x)
    assert got.dtype == x.dtype and got.shape == x.shape[:-1]
    np.testing.assert_array_equal(got, x.sum(axis=-1))
    # a plain left-to-right sum differs somewhere: the test can tell the orders apart
    if n >= 9:
        plain = np.zeros(x.shape[:-1], dtype=dtype)
        for i in range(n):
            plain += x[..., i]
        assert not np.array_equal(plain, x.sum(axis=-1))


def test_chi2_fixed_of_histograms() -> None:
    p = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]], dtype=np.float32)
    q = np.array([[[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]], dtype=np.float32)
    # same histogram: 0; disjoint: sum of (p_b - 0)^2 / p_b + (0 - q_b)^2 / q_b = 1 + 1
    np.testing.assert_array_equal(chi2_fixed(p, q), [[0.0, 2.0]])


def test_trace_edges_are_made_once_per_bin_count_and_read_only():
    edges = hg.trace_edges(10)
    assert hg.trace_edges(10) is edges and not edges.flags.writeable
    assert edges.shape == (6, 11) and hg.trace_edges(12).shape == (6, 13)
