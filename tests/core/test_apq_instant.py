"""APQ's per-instant histogram distances (``apq_instant``) give, bit for bit, the distances and
the spread computed whole for each request, and are kept per instant within their bound."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from predictor.core.state import histograms as hg
from predictor.core.state.request import RequestBatch, as_batch
from predictor.core.state.snapshot import from_log
from predictor.core.wait import apq_distance as dist
from predictor.core.wait.apq import APQ
from predictor.core.wait.apq_instant import InstantColumns
from predictor.core.wait.targets import WaitTargets
from tests.core.wait_fakes import make_ctx, make_jobs


def histograms(m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A target's (6, 10) and a history's (m, 6, 10) shares, float32 as the sweep keeps them,
    with empty sets (all-zero rows) among them."""
    rng = np.random.default_rng(seed)
    counts = rng.poisson(2.0, (m + 1, 6, 10)) * (rng.random((m + 1, 6, 1)) < 0.9)
    total = counts.sum(axis=2, keepdims=True)
    shares = (counts / np.maximum(total, 1)).astype(np.float32)
    return shares[0], shares[1:]


@pytest.mark.parametrize("m", [4_000, 257, 1])
def test_columns_taken_apart_equal_the_whole_distances_and_spread(m):
    target, history = histograms(m, m)
    whole = dist.hist_distances_fixed(target, history)
    own = dist.hist_distances_kinds(
        target, history[:, hg.REQUEST_KINDS], hg.REQUEST_KINDS
    )  # a view
    kept = dist.hist_distances_kinds(
        target, np.ascontiguousarray(history[:, hg.INSTANT_KINDS]), hg.INSTANT_KINDS
    )
    np.testing.assert_array_equal(own, whole[:, hg.REQUEST_KINDS])
    np.testing.assert_array_equal(kept, whole[:, hg.INSTANT_KINDS])
    parts = np.concatenate([own.std(axis=0), kept.std(axis=0)])
    assert dist.spread_of(parts) == dist.distribution_spread(whole)


def test_the_spread_taken_apart_is_the_same_for_any_history_length():
    """numpy reduces each column of a tall array on its own: (m, 2) and (m, 4) give the
    (m, 6) columns' std whatever m (a reduction's order may depend on the shape)."""
    rng = np.random.default_rng(5)
    for m in rng.integers(1, 6_000, 300):
        d = rng.random((m, 6)) * (rng.random((m, 6)) < 0.7)
        parts = [
            np.ascontiguousarray(d[:, k]).std(axis=0) for k in (hg.REQUEST_KINDS, hg.INSTANT_KINDS)
        ]
        assert dist.spread_of(np.concatenate(parts)) == dist.distribution_spread(d), m


def test_an_instant_is_computed_once_and_another_instant_is_not_read_from_it():
    target, history = histograms(300, 3)
    asked = []

    def kinds(which: slice) -> np.ndarray:
        asked.append(which)
        return np.ascontiguousarray(history[:, which])

    cache = InstantColumns()
    first = cache.get(("q", 0, 300), target, kinds)
    again = cache.get(("q", 0, 300), target.copy(), kinds)
    assert again[0] is first[0] and (cache.kept.hits, cache.kept.misses) == (1, 1)
    assert asked == [hg.INSTANT_KINDS]  # the block's histograms are gathered on a miss only
    assert not first[0].flags.writeable and not first[1].flags.writeable
    moved = target.copy()
    moved[hg.INSTANT_KINDS.start, 0] += 0.5  # another instant: its running jobs differ
    other = cache.get(("q", 0, 300), moved, kinds)
    assert cache.kept.misses == 2 and not np.array_equal(other[0], first[0])
    request_only = target.copy()
    request_only[0, 0] += 0.5  # a request's own time: the instant's columns are the same
    assert cache.get(("q", 0, 300), request_only, kinds)[0] is first[0]
    assert cache.get(("q", 1, 301), target, kinds)[0] is not first[0]  # another block


def test_the_kept_columns_stay_within_their_bytes():
    target, history = histograms(1_000, 4)

    def kinds(which: slice) -> np.ndarray:
        return np.ascontiguousarray(history[:, which])

    entry = 1_000 * 4 * 8
    cache = InstantColumns(max_bytes=3 * entry)
    for k in range(10):
        cache.get(("q", k, k + 1_000), target, kinds)
    assert cache.kept.bytes <= 3 * entry and len(cache.kept) == 3
    cache.get(("q", 9, 1_009), target, kinds)  # the newest is still kept
    assert cache.kept.hits == 1


def test_snapshot_answers_with_kept_columns_equal_those_computed_whole():
    jobs = make_jobs(900, seed=7)
    ctx = make_ctx(jobs, n_tune=300)
    apq = APQ(spread_threshold=-np.inf, min_history=20).fit(ctx)  # always by distributions
    idx = apq.index(ctx.state)
    base = RequestBatch.from_jobs(jobs.iloc[[640, 820]])
    for k, row in enumerate((640, 820)):
        snap = from_log(jobs, float(jobs["submit_time"].iat[row]), machine_procs=128, rows=row)
        for procs, limit in [(1, 600.0), (32, 7200.0), (100, 60.0), (8, 86400.0)]:
            request = dataclasses.replace(base.request(k).with_procs(procs), req_time_s=limit)
            targets = WaitTargets.from_snapshot(ctx, snap, as_batch([request]))
            shared = apq._target(targets, 0)
            assert shared.shared
            got, spread, n = apq.candidates(idx, shared)
            want, want_spread, _ = apq.candidates(idx, dataclasses.replace(shared, shared=False))
            assert n >= 20 and spread == want_spread and np.isfinite(spread)
            np.testing.assert_equal(
                dataclasses.asdict(got["distributions"]), dataclasses.asdict(want["distributions"])
            )
            assert apq.resolve(got, spread, n) == apq.resolve(want, want_spread, n)
    assert idx.instant.kept.hits == 6 and idx.instant.kept.misses == 2  # one per instant
    kept = idx.instant.request_hist  # the block's request kinds: gathered once per instant
    assert (kept.hits, kept.misses) == (6, 2)


def test_a_blocks_request_kinds_are_gathered_once_and_kept_read_only():
    target, history = histograms(500, 5)
    asked = []

    def kinds(which: slice) -> np.ndarray:
        asked.append(which)
        return history[:, which]  # a strided view: kept as a contiguous copy

    cache = InstantColumns(request_bytes=2 * 500 * 2 * history.shape[2] * history.itemsize)
    first = cache.request_kinds(("q", 0, 500), kinds)
    assert cache.request_kinds(("q", 0, 500), kinds) is first and asked == [hg.REQUEST_KINDS]
    assert first.flags.c_contiguous and not first.flags.writeable
    assert first.tobytes() == np.ascontiguousarray(history[:, hg.REQUEST_KINDS]).tobytes()
    for k in range(1, 5):
        cache.request_kinds(("q", k, k + 500), kinds)
    assert len(cache.request_hist) == 2 and ("q", 0, 500) not in cache.request_hist
