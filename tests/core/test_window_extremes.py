"""Sliding-window column extremes from kept block extremes equal the direct reduction."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.window_extremes import BlockExtremes


def test_every_window_equals_the_direct_min_and_max_bit_for_bit():
    rng = np.random.default_rng(2)
    values = rng.normal(size=(1000, 5))
    values[::97, 2] = -np.inf  # infinities and a NaN propagate as in a direct reduction
    values[500, 4] = np.nan
    ext = BlockExtremes(values, block=16)
    spans = [(0, 1), (0, 1000), (3, 17), (16, 48), (15, 49), (5, 40), (990, 1000)]
    spans += [tuple(sorted(rng.choice(1001, 2, replace=False))) for _ in range(300)]
    for start, stop in spans:
        lo, hi = ext.window(int(start), int(stop))
        rows = values[start:stop]
        assert lo.tobytes() == rows.min(axis=0).tobytes(), (start, stop)
        assert hi.tobytes() == rows.max(axis=0).tobytes(), (start, stop)


def test_fewer_rows_than_a_block_and_an_empty_window():
    values = np.arange(12.0).reshape(4, 3)
    ext = BlockExtremes(values, block=64)
    lo, hi = ext.window(1, 4)
    assert lo.tolist() == [3.0, 4.0, 5.0] and hi.tolist() == [9.0, 10.0, 11.0]
    with pytest.raises(ValueError, match="empty window"):
        ext.window(2, 2)
