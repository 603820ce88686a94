"""APQ's history index: slices and chunk minima give exactly the gathered history."""

from __future__ import annotations

import numpy as np

from predictor.core.state.sweep import compute_state
from predictor.core.wait import apq_index
from predictor.core.wait.apq_index import HistoryIndex, QueueRows
from predictor.core.wait.params import APQParams
from tests.core.wait_fakes import make_jobs


def test_chunk_min_max_equals_the_columns_min_max_of_any_slice():
    rng = np.random.default_rng(0)
    n = 5 * apq_index.CHUNK + 37
    x = rng.normal(size=(n, 4))
    q = QueueRows.build(np.arange(n), np.arange(n, dtype=float), x, np.zeros(n))
    for lo, hi in [(0, n), (1, n - 1), (3, 4), (apq_index.CHUNK, 3 * apq_index.CHUNK), (10, 900)]:
        got_min, got_max = q.min_max(lo, hi)
        np.testing.assert_array_equal(got_min, x[lo:hi].min(axis=0))
        np.testing.assert_array_equal(got_max, x[lo:hi].max(axis=0))


def gathered(idx: HistoryIndex, queue: int, t: float, n_before: int):
    """The block as the code before the index built it: rows gathered one by one."""
    q = idx.by_queue[queue]
    p = int(np.searchsorted(q.starts, t, side="right"))
    cand = q.rows[max(0, p - idx.params.history_size - 256) : p]
    rows = cand[cand < n_before][-idx.params.history_size :]
    x = idx.sweep.summary[rows]
    return rows, x, idx.wait[rows], x.min(axis=0), x.max(axis=0), idx.sweep.hist[rows]


def test_block_equals_the_gathered_history_for_every_row():
    jobs = make_jobs(1500, seed=12)
    jobs.loc[700:710, "wait_time"] = 0  # jobs that start at their own second (ties)
    jobs.loc[701:705, "submit_time"] = jobs.loc[700, "submit_time"]
    jobs = jobs.sort_values("submit_time", kind="stable").reset_index(drop=True)
    sweep = compute_state(jobs)
    idx = HistoryIndex(sweep, APQParams(history_size=600))
    submit = jobs["submit_time"].to_numpy(float)
    for i in range(100, 1500, 3):
        block = idx.block(1, submit[i], i)
        rows, x, wait, x_min, x_max, hist = gathered(idx, 1, submit[i], i)
        np.testing.assert_array_equal(block.rows, rows)
        np.testing.assert_array_equal(block.x, x)
        np.testing.assert_array_equal(block.wait, wait)
        np.testing.assert_array_equal(block.x_min, x_min)
        np.testing.assert_array_equal(block.x_max, x_max)
        np.testing.assert_array_equal(block.hist, hist)
