"""APQ's batched candidate path gives, bit for bit, the one-target numbers."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.state.request import RequestBatch, as_batch
from predictor.core.state.snapshot import from_log
from predictor.core.wait import apq_batch as batch
from predictor.core.wait import apq_distance as dist
from predictor.core.wait import apq_predictors as pred
from predictor.core.wait.apq import APQ
from predictor.core.wait.apq_structure import check_structure
from tests.core.wait_fakes import make_ctx, make_jobs


def history_and_targets(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A history (m, 16) with a flat column, and 6 targets differing in a few columns only
    (as candidate sizes do), one of them beyond the history's range."""
    rng = np.random.default_rng(seed)
    history = rng.integers(0, 9, size=(257, 16)).astype(float) * rng.uniform(0.5, 3.0, 16)
    history[:, 7] = 4.0  # a constant feature: its range is 0 unless a target leaves it
    targets = np.repeat(history[:1], 6, axis=0)
    targets[:, 0] = [1, 2, 4, 8, 16, 32]
    targets[:, 3] = rng.uniform(0, 40, 6)
    targets[:, 11] = rng.uniform(0, 40, 6)
    targets[5, 7] = 9.0  # opens the constant column for this target only
    targets[2, 11] = targets[0, 11]  # agrees with target 0 where the others differ
    return history, targets


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_combined_distances_equal_each_targets_own_distances_bit_for_bit(seed):
    history, targets = history_and_targets(seed)
    w = np.random.default_rng(seed).uniform(0, 1, 16)
    h_min, h_max = history.min(axis=0), history.max(axis=0)
    got = batch.combined_distances(targets, history, h_min, h_max, w)
    for k, target in enumerate(targets):
        one = dist.combine(dist.feature_distances(target, history, h_min, h_max), w)
        assert got[k].tobytes() == one.tobytes()


def test_nearest_batch_selects_what_argpartition_selects_row_by_row_with_ties():
    dd = np.random.default_rng(4).integers(0, 20, size=(5, 300)).astype(float)  # many ties
    got = batch.nearest_batch(dd, 17)
    for k in range(len(dd)):
        np.testing.assert_array_equal(got[k], np.argpartition(dd[k], 16)[:17])


@pytest.mark.parametrize("seed", range(6))
def test_batched_structure_check_gives_the_same_noise_and_verdict(seed):
    rng = np.random.default_rng(seed)
    d = np.sort(rng.uniform(0, 0.4, size=(8, 41)), axis=1)
    wait = rng.choice([0.0, 100.0, 105.0, 3000.0], size=(8, 41)) + rng.uniform(0, 5, (8, 41))
    wait[3] = 50.0  # one flat set: the wait term is 0
    got = batch.check_structure_batch(d, wait, 0.04, 0.3, 0.2, 0.3)
    for k in range(len(d)):
        one = check_structure(d[k], wait[k], 0.04, 2, 0.3, 0.2, 0.3)
        np.testing.assert_array_equal(got.outlier[k], one.labels < 0)
        assert got.good[k] == one.good


def test_nearest_from_known_nearest_equals_a_fresh_search_and_ties_fall_back():
    d = np.array([0.5, 0.1, 0.3, 0.3, 0.2, 0.9, 0.3, 0.05])
    known = np.array([7, 1, 4, 2, 3, 6])  # the 6 nearest in (D, index) order
    np.testing.assert_array_equal(pred.nearest_sorted(d, 3, known), [7, 1, 4])
    np.testing.assert_array_equal(pred.nearest_sorted(d, 3, known), pred.nearest_sorted(d, 3))
    tied = pred.nearest_sorted(d, 4, known)  # the 4th and 5th tie at 0.3: argpartition picks
    np.testing.assert_array_equal(tied, pred.nearest_sorted(d, 4))


@pytest.mark.parametrize("chain", ["spec", "median"])
def test_a_molding_batch_answers_as_its_candidates_one_by_one_bit_for_bit(chain):
    jobs = make_jobs(900, seed=5)
    ctx = make_ctx(jobs, n_tune=300)
    apq = APQ(chain=chain, k=5, spread_threshold=np.inf, min_history=20).fit(ctx)
    base = RequestBatch.from_jobs(jobs.iloc[[600, 750, 880]])
    for k, row in enumerate((600, 750, 880)):
        snap = from_log(jobs, float(jobs["submit_time"].iat[row]), machine_procs=128, rows=row)
        reqs = [base.request(k).with_procs(p) for p in (1, 2, 8, 32, 100, 128)]
        got = apq.predict(snap, as_batch(reqs))
        for j, r in enumerate(reqs):
            one = apq.predict(snap, as_batch([r]))
            assert got.wait_s[j] == one.wait_s[0]
            assert got.predictor[j] == one.predictor[0]
            assert got.support[j] == one.support[0]


@pytest.mark.parametrize("seed", range(6))
def test_batched_spreads_redo_only_the_kinds_a_candidate_changes_and_equal_numpys(seed):
    """Each target's spread equals ``distribution_spread`` of its own distances to the bit,
    whether none, one or several of its histograms differ from target 0's."""
    rng = np.random.default_rng(seed)
    history = rng.random((int(rng.integers(60, 3000)), 6, 10)).astype(np.float32)
    history /= history.sum(axis=2, keepdims=True)
    targets = np.repeat(rng.random((1, 6, 10)).astype(np.float32), 5, axis=0)
    for k, kinds in enumerate(([], [4], [4, 5], [0, 2, 5]), start=1):
        targets[k, kinds] = rng.random((len(kinds), 10))
    targets /= targets.sum(axis=2, keepdims=True)
    hds = batch.hist_distances_batch(targets, history)
    for k, hd in enumerate(hds):
        assert np.array_equal(hd, dist.hist_distances_fixed(targets[k], history))
    assert batch.spreads_batch(targets, hds) == [dist.distribution_spread(hd) for hd in hds]
    alone = rng.random((400, 1))  # one column alone: numpy sums it pairwise, not row by row
    assert (
        dist.row_summed_std(np.repeat(alone, 2, axis=1)[:, 0])
        == np.repeat(alone, 2, axis=1).std(axis=0)[0]
    )
