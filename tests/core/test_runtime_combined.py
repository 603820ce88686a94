"""Density rangeSets: the box-kernel pieces, the selection at a level, the online level."""

from __future__ import annotations

import numpy as np

from predictor.core.runtime.combined import (
    Pieces,
    lognormal_pieces,
    mixture,
    online_level,
    pieces,
    pieces_ordered,
    recency_weights,
    select,
    stable_order,
)


def test_pieces_of_two_equal_runtimes_and_one_other_hold_their_weights():
    pc = pieces(np.array([100.0, 100.0, 1000.0]), np.array([0.5, 0.25, 0.25]), 1.2)
    # boxes [100/sqrt(1.2), 100 sqrt(1.2)] (weight 0.75) and the same around 1000 (0.25)
    np.testing.assert_allclose(
        pc.x, [100 / 1.2**0.5, 100 * 1.2**0.5, 1000 / 1.2**0.5, 1000 * 1.2**0.5]
    )
    np.testing.assert_allclose(pc.m, [0.75, 0.0, 0.25])


def test_select_keeps_dense_pieces_merges_touching_ones_and_clips_to_the_request():
    pc = pieces(np.array([100.0, 105.0, 1000.0]), np.full(3, 1 / 3), 1.2)
    low, high, mass = select(pc, 0.0)
    assert low.size == 2 and np.isclose(mass.sum(), 1.0)  # 100 and 105 overlap: one range
    low, high, mass = select(pc, 5e-3)  # 1/3 over ~180 s near 1000 s: 1.8e-3 per second
    assert low.size == 1 and high[0] < 200
    low, high, mass = select(pc, 0.0, upper_s=103.0)
    assert high.max() == 103.0 and mass.sum() < 2 / 3


def test_mixture_keeps_total_mass_and_weights():
    a = pieces(np.array([100.0]), np.array([1.0]), 1.2)
    b = pieces(np.array([105.0]), np.array([1.0]), 1.2)
    m = mixture([(a, 0.25), (b, 0.75)])
    assert np.isclose(m.m.sum(), 1.0)
    inside_a_only = m.x[1:] <= b.x[0]
    np.testing.assert_allclose(
        m.m[inside_a_only].sum(), 0.25 * np.log(b.x[0] / a.x[0]) / np.log(1.2)
    )


def test_recency_weights_decay_and_sum_to_one():
    w = recency_weights(3, 0.5)
    np.testing.assert_allclose(w, np.array([1, 0.5, 0.25]) / 1.75)


def test_online_level_holds_the_target_success_and_reads_only_known_outcomes():
    rng = np.random.default_rng(0)
    n = 4000
    arrival = np.arange(n, dtype=float)
    known = arrival + rng.integers(1, 50, n)
    draws = rng.uniform(0, 1, n)

    def hit(i: int, log_lam: float) -> bool:  # success falls as the level rises
        return bool(draws[i] < 1 / (1 + np.exp(log_lam)))

    log_lam, hits = online_level(hit, n, arrival, known, target=0.75, eta=0.05, start_log_lam=0.0)
    assert abs(hits[1000:].mean() - 0.75) < 0.03
    draws2 = draws.copy()
    draws2[2000:] = 0.999  # later outcomes cannot move earlier levels
    log2, _ = online_level(
        lambda i, x: bool(draws2[i] < 1 / (1 + np.exp(x))), n, arrival, known,
        target=0.75, eta=0.05, start_log_lam=0.0,
    )  # fmt: skip
    np.testing.assert_array_equal(log_lam[:2001], log2[:2001])


def test_lognormal_pieces_centre_on_the_median_and_hold_unit_mass():
    pc = lognormal_pieces(50.0, 100.0, 200.0, 1.2)
    assert np.isclose(pc.m.sum(), 1.0)
    peak = np.argmax(pc.m)
    assert pc.x[peak] <= 100.0 * 1.1 and pc.x[peak + 1] >= 100.0 / 1.1


# The plain formulations the fast ones replaced (np.r_, np.unique, np.clip, norm.cdf):
# the fast ones must give the very same floats.


def _pieces_plain(c: np.ndarray, w: np.ndarray, ratio: float) -> Pieces:
    c = np.maximum(c, 1.0)
    half = np.sqrt(ratio)
    edges = np.concatenate([c / half, c * half])
    delta = np.concatenate([w, -w])
    order = np.argsort(edges, kind="stable")
    x, cover = edges[order], np.cumsum(delta[order])
    keep = np.r_[np.diff(x) > 0, False]
    x_next = np.r_[x[1:], x[-1]]
    mass = np.maximum(cover, 0.0) * np.log(x_next / x) / np.log(ratio)
    return Pieces(np.r_[x[keep], x_next[keep][-1:]], mass[keep])


def _mixture_plain(parts: list[tuple[Pieces, float]]) -> Pieces:
    x = np.unique(np.concatenate([p.x for p, _ in parts]))
    m = np.zeros(x.size - 1)
    for p, a in parts:
        dens_log = np.r_[p.m / np.log(p.x[1:] / p.x[:-1]), 0.0]
        k = np.searchsorted(p.x, x[:-1], side="right") - 1
        inside = (k >= 0) & (k < p.m.size)
        m += a * np.where(inside, dens_log[np.clip(k, 0, p.m.size)], 0.0) * np.log(x[1:] / x[:-1])
    return Pieces(x, m)


def test_fast_pieces_mixture_and_select_equal_the_plain_formulation_to_the_bit():
    rng = np.random.default_rng(7)
    for trial in range(200):
        n = int(rng.integers(1, 40))
        c = np.round(np.exp(rng.uniform(0, 11, n)), int(rng.integers(0, 3)))  # repeats too
        c[: n // 3] = c[0]
        w = recency_weights(n, 0.9)
        got, want = pieces(c, w, 1.2), _pieces_plain(c, w, 1.2)
        assert np.array_equal(got.x, want.x) and np.array_equal(got.m, want.m)
        q = sorted(np.exp(rng.uniform(0, 10, 3)))
        parts = [(got, 0.5), (pieces(c * 1.5, w, 1.2), 0.3), (lognormal_pieces(*q, 1.2), 0.2)]
        mixed, plain = mixture(parts), _mixture_plain(parts)
        assert np.array_equal(mixed.x, plain.x) and np.array_equal(mixed.m, plain.m)
        upper = float(rng.choice([0.5, q[1], 1e9]))
        low, high, mass = select(mixed, 1e-6 * (trial % 5), upper)
        assert (low >= 1.0).all() and (high <= max(upper, 1.0)).all() and (mass > 0).all()


def test_lognormal_pieces_use_the_normal_cdf_as_scipy_states_it():
    from scipy.stats import norm

    pc = lognormal_pieces(100.0, 400.0, 3000.0, 1.2)
    mu, sigma = np.log(400.0), np.log(3000.0 / 100.0) / (2 * 1.2816)
    step = np.log(1.2) / 2
    z = np.arange(mu - 3 * sigma, mu + 3 * sigma + step, step)
    assert np.array_equal(pc.x, np.exp(z))
    mass = np.diff(norm.cdf((z - mu) / sigma))
    assert np.array_equal(pc.m, mass / mass.sum())


def test_stable_order_from_a_near_order_is_numpys_stable_argsort():
    """Whatever the hint (right, nearly right, reversed, from other values of the same
    length), the order is np.argsort(kind="stable"): ties in index order, NaN last."""
    rng = np.random.default_rng(11)
    for trial in range(300):
        n = int(rng.integers(2, 3_000))
        c = np.round(np.exp(rng.uniform(0, 9, n)), int(rng.integers(0, 2)))  # many ties
        edges = np.concatenate([c / np.sqrt(1.2), c * np.sqrt(1.2)])
        hint = np.argsort(edges, kind="stable")
        scaled = np.concatenate([c * 1.37 / np.sqrt(1.2), c * 1.37 * np.sqrt(1.2)])
        others = [edges, scaled, edges[::-1].copy(), rng.permutation(edges)]
        if trial % 10 == 0:
            others.append(np.where(rng.random(2 * n) < 0.01, np.nan, edges))
        for values in others:
            want = np.argsort(values, kind="stable")
            for h in (hint, hint[::-1].copy(), rng.permutation(2 * n), None):
                assert np.array_equal(stable_order(values, h), want)
    assert np.array_equal(stable_order(np.array([2.0, 1.0]), np.array([0])), [1, 0])


def test_pieces_hinted_by_another_requested_times_order_are_the_same_floats():
    rng = np.random.default_rng(12)
    for _ in range(100):
        n = int(rng.integers(1, 2_000))
        share = np.round(rng.uniform(0.01, 1.0, n), int(rng.integers(1, 4)))
        w = recency_weights(n, 0.999)
        _, hint = pieces_ordered(share * float(rng.integers(60, 86_400)), w, 1.2)
        c = share * float(rng.integers(60, 86_400))
        got, order = pieces_ordered(c, w, 1.2, hint)
        want = pieces(c, w, 1.2)
        assert got.x.tobytes() == want.x.tobytes() and got.m.tobytes() == want.m.tobytes()
