"""The engine-free experiment runners on tiny inputs (spec placement.md §3.3, §3.4 C)."""

from __future__ import annotations

import numpy as np

from pyss_adapter.core.placement.experiments import g1_rows, g1_sources, t0_rows


def test_t0_least_allocated_spreads_and_tlp_packs() -> None:
    rows = {r["policy"]: r for r in t0_rows(seed=0, nodes=10, pods=40)}
    assert rows["least-allocated"]["nodes_used"] == 10  # 4 pods each by requests
    assert rows["tlp X=50"]["nodes_used"] < 10
    assert all(0 <= r["under_x"] <= 1 and 0 <= r["fragmented"] <= 1 for r in rows.values())


def test_g1_gaussian_control_keeps_q_near_or_below_rho() -> None:
    """Each machine's exceedance is <= rho by construction when items are Gaussian."""
    u = np.random.default_rng(0).uniform(0.3, 0.95, 300)
    x, c = g1_sources(None, u, (0.1,), 400, seed=1)["gauss 0.1"]
    rows = g1_rows(x, c, instances=2, items=300, seed=2, estimators=[("gpa", 0.1), ("av", 1.0)])
    gpa, av = rows
    assert gpa["q"] <= 1.1 * 0.1
    assert av["q"] >= 0.3  # packing by means overloads about half the machines' samples
    assert av["m_abs"] <= gpa["m_abs"]


def test_g1_machines_grow_as_the_estimator_gets_stricter() -> None:
    u = np.random.default_rng(1).uniform(0.3, 0.95, 200)
    x, c = g1_sources(None, u, (0.1,), 300, seed=3)["swf-beta 0.1"]
    est = [("gpa", 0.1), ("gpa", 0.01), ("gpa", 0.001)]
    m = [r["m_abs"] for r in g1_rows(x, c, instances=2, items=200, seed=4, estimators=est)]
    assert m == sorted(m)


def test_rebalance_fills_the_last_machine_from_the_largest_others() -> None:
    from pyss_adapter.core.placement.gpa import Estimator, rebalance

    mu, sigma = np.array([0.6, 0.6, 0.3]), np.zeros(3)
    # L = {2} (0.3) takes item 0 (0.6, from the first of two equal machines); then nothing fits.
    assert rebalance([[0], [1], [2]], mu, sigma, Estimator("av", 1.0)) == [[1], [2, 0]]
