"""Chunked evaluations: split, merge, and the same answers as one process for every method."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core import chunks
from predictor.core.state.sweep import compute_state
from predictor.core.wait.registry import FACTORIES, make_method
from predictor.core.wait.types import WaitContext, WaitPrediction
from tests.core.wait_fakes import make_jobs


@pytest.fixture(scope="module")
def ctx() -> WaitContext:
    jobs = make_jobs(700, seed=5)
    return WaitContext(jobs, compute_state(jobs), 200, 128)


def test_split_rows_is_contiguous_near_equal_and_complete():
    parts = chunks.split_rows(np.arange(10), 3)
    assert [p.tolist() for p in parts] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert len(chunks.split_rows(np.arange(2), 5)) == 2  # never an empty chunk
    with pytest.raises(ValueError, match="n_chunks"):
        chunks.split_rows(np.arange(3), 0)


def test_split_rows_cuts_only_between_blocks_nearest_the_even_cuts():
    blocks = np.repeat([0, 1, 2, 3], [5, 1, 2, 4])  # 12 rows, labels change at 5, 6, 8
    parts = chunks.split_rows(np.arange(12), 3, blocks)
    assert [p.tolist() for p in parts] == [[0, 1, 2, 3, 4], [5, 6, 7], [8, 9, 10, 11]]
    labels = [set(blocks[p].tolist()) for p in parts]  # no block in two chunks
    assert all(a.isdisjoint(b) for a, b in zip(labels, labels[1:], strict=False))
    # more chunks asked than blocks: one chunk per block; one block: one chunk
    assert len(chunks.split_rows(np.arange(12), 10, blocks)) == 4
    assert len(chunks.split_rows(np.arange(12), 3, np.zeros(12))) == 1


def test_row_boundaries_equal_each_rows_own_boundary(ctx):
    """The vectorised boundaries of log rows equal :func:`retrain.boundaries` at each row's
    own arrival (rows in and after the tuning part; the log has equal submit times)."""
    from predictor.core.state.retrain import boundaries, row_boundaries

    submit = ctx.jobs["submit_time"].to_numpy(float)
    rows = np.arange(len(submit))
    for every in (1, 7, 50, 5000):
        want = boundaries(rows, submit[rows], submit, ctx.n_tune, every)
        np.testing.assert_array_equal(row_boundaries(rows, ctx.n_tune, every), want)


def test_gbm_chunks_need_one_model_each(ctx):
    """Chunks cut by GBM's row blocks: each retrain boundary's model serves one chunk only,
    and the merged answers equal one call's."""
    method = make_method("gbm", 0).fit(ctx)
    method.retrain_every = 50
    rows = np.arange(220, 700)
    blocks = method.row_blocks(rows)
    assert len(np.unique(blocks)) == 10
    parts = chunks.split_rows(rows, 4, blocks)
    used = [set(method.row_blocks(p).tolist()) for p in parts]
    assert sum(len(u) for u in used) == len(set().union(*used)) == 10
    whole = method.predict_rows(rows)
    merged = chunks.merge([method.predict_rows(p) for p in parts])
    np.testing.assert_array_equal(whole.wait_s, merged.wait_s)


def test_chunk_count_gives_a_few_chunks_per_worker_but_not_tiny_ones():
    assert chunks.chunk_count(100_000, 1) == 1
    assert chunks.chunk_count(100_000, 2) == 2 * chunks.CHUNKS_PER_JOB
    assert chunks.chunk_count(300, 4) == 1
    with pytest.raises(ValueError, match="jobs"):
        chunks.chunk_count(10, 0)


def test_merge_concatenates_arrays_optionals_and_extras_in_order():
    a = WaitPrediction(
        np.array([1.0]), predictor=np.array(["x"], dtype=object), extra={"r": np.array([5])}
    )
    b = WaitPrediction(
        np.array([2.0, 3.0]),
        predictor=np.array(["y", "z"], dtype=object),
        extra={"r": np.array([6, 7])},
    )
    m = chunks.merge([a, b])
    np.testing.assert_array_equal(m.wait_s, [1.0, 2.0, 3.0])
    assert list(m.predictor) == ["x", "y", "z"] and m.upper_s is None
    np.testing.assert_array_equal(m.extra["r"], [5, 6, 7])
    with pytest.raises(ValueError, match="missing"):
        chunks.merge([a, WaitPrediction(np.array([1.0]))])


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_every_wait_method_answers_chunks_exactly_as_one_call(ctx, name):
    rows = np.arange(220, 700, 3)
    method = make_method(name, 0).fit(ctx)
    whole = method.predict_rows(rows)
    parts = chunks.merge([method.predict_rows(c) for c in chunks.split_rows(rows, 4)])
    np.testing.assert_array_equal(whole.wait_s, parts.wait_s)
    for key, value in whole.extra.items():
        np.testing.assert_array_equal(value, parts.extra[key])


def test_worker_processes_give_the_one_process_answer(ctx):
    rows = np.arange(220, 700, 2)
    method = make_method("gbm", 0).fit(ctx)
    whole = method.predict_rows(rows)
    seen = []
    spread = chunks.predict_rows(method, rows, jobs=2, n_chunks=3, progress=seen.append)
    np.testing.assert_array_equal(whole.wait_s, spread.wait_s)
    assert seen[-1] == 1.0
