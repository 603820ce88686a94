"""The seed's relevant history read from the recent end of a group slice
(predictor.core.runtime.relevant) equals relevant_count over the whole slice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from predictor.core.runtime.history import GroupIndex
from predictor.core.runtime.rangeset import relevant_count
from predictor.core.runtime.relevant import RelevantHistory


def _log(rng: np.random.Generator, n: int) -> tuple[GroupIndex, np.ndarray, np.ndarray]:
    """Three groups: one with a slow drift (its relevant history runs back thousands of
    jobs), one with repeated runtimes (spans of 0), one of ordinary spread."""
    group = rng.integers(0, 3, n)
    run = np.where(
        group == 0,
        1000.0 + np.arange(n) * 0.5 + rng.normal(0, 1, n),
        np.where(group == 1, 3600.0, np.round(np.exp(rng.normal(6, 2, n)))),
    )
    run[rng.random(n) < 0.01] = -1.0  # runtimes the log does not record
    end = np.sort(rng.uniform(0, 1e6, n))
    index = GroupIndex(pd.DataFrame({"g": group}), end)
    return index, run, end


@pytest.mark.parametrize("start,overlap", [(10, 0.9), (1, 0.5), (100, 1.0)])
def test_relevant_rows_equal_relevant_count_over_the_whole_slice(start, overlap):
    rng = np.random.default_rng(0)
    index, run, end = _log(rng, 6000)
    relevant = RelevantHistory(index, run)
    lengths = set()
    for t in rng.uniform(0, 1.05e6, 150):
        for code in range(3):
            lo, hi = (int(v[0]) for v in index.bounds(np.array([code]), np.array([t])))
            if hi <= lo:
                continue
            whole = index.order[lo:hi][::-1]  # the slice, most recent first
            n = relevant_count(run[whole], start, overlap)
            got = relevant.rows(lo, hi, start, overlap)
            assert np.array_equal(got, whole[:n]), (code, t)
            lengths.add(min(n // 64, 9))
    assert {0, 1}.issubset(lengths)  # short histories and ones past the first read


def test_a_history_needing_the_whole_slice_is_read_whole():
    index = GroupIndex(pd.DataFrame({"g": np.zeros(3000, dtype=int)}), np.arange(3000.0))
    run = np.full(3000, 50.0)
    run[0] = 10_000.0  # the oldest job alone holds the range
    relevant = RelevantHistory(index, run)
    assert relevant.count(0, 3000, 10, 0.9) == 3000 == relevant_count(run[::-1], 10, 0.9)
