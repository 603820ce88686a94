"""``SortedWindow``: the last ``size`` values, sorted as ``np.sort`` of the window would be."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from predictor.core.wait.sorted_window import SortedWindow


@pytest.mark.parametrize("size", [1, 7, 50])
def test_the_view_equals_the_sorted_window_after_every_append(size: int) -> None:
    rng = np.random.default_rng(size)
    values = np.concatenate([rng.integers(-5, 5, 300).astype(float), rng.normal(0, 1e4, 300)])
    window, plain = SortedWindow(size), deque(maxlen=size)
    for v in rng.permutation(values):  # ties, signs and repeats of the oldest value
        window.append(v)
        plain.append(v)
        assert len(window) == len(plain)
        np.testing.assert_array_equal(window.sorted(), np.sort(np.array(plain)))


def test_nan_and_empty_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="NaN"):
        SortedWindow(3).append(float("nan"))
    with pytest.raises(ValueError, match="size"):
        SortedWindow(0)
