"""Maximum-likelihood weights of density's parts (``predictor.core.runtime.mix_weights``)."""

from __future__ import annotations

import numpy as np

from predictor.core.runtime.combined import Pieces
from predictor.core.runtime.mix_weights import density_at, em_weights


def test_density_at_reads_the_piece_holding_the_point():
    pc = Pieces(np.array([1.0, 3.0, 7.0]), np.array([0.5, 0.5]))
    assert density_at(pc, 2.0) == 0.25
    assert density_at(pc, 3.0) == 0.125  # an edge belongs to the piece to its right
    assert density_at(pc, 0.5) == 0.0 and density_at(pc, 7.0) == 0.0
    assert density_at(Pieces(np.zeros(1), np.zeros(0)), 2.0) == 0.0


def test_em_recovers_the_weights_that_drew_the_sample():
    """Draw from 0.7 N(0, 1) + 0.3 N(4, 1) and give EM the two densities at the draws: it
    finds about 0.7 and 0.3, and its log-likelihood beats every weight on a fine grid."""
    rng = np.random.default_rng(0)
    n = 20000
    first = rng.random(n) < 0.7
    x = np.where(first, rng.normal(0, 1, n), rng.normal(4, 1, n))
    dens = np.c_[np.exp(-(x**2) / 2), np.exp(-((x - 4) ** 2) / 2)] / np.sqrt(2 * np.pi)
    w = em_weights(dens, np.array([0.5, 0.5]))
    assert abs(w[0] - 0.7) < 0.02
    grid = np.linspace(0.01, 0.99, 99)
    loglik = [np.log(dens @ np.array([g, 1 - g])).sum() for g in grid]
    assert np.log(dens @ w).sum() >= max(loglik)


def test_a_component_that_explains_nothing_gets_no_weight_and_a_zero_start_stays_zero():
    dens = np.array([[1.0, 0.0, 0.5], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    w = em_weights(dens, np.array([0.4, 0.2, 0.4]))
    assert w[1] == 0.0 and abs(w.sum() - 1.0) < 1e-12
    w0 = em_weights(dens, np.array([0.0, 0.5, 0.5]))  # part (a) not allowed
    assert w0[0] == 0.0 and w0[2] == 1.0
