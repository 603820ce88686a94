"""The engine-free experiment runners on tiny inputs (spec placement.md §3.3, §3.4 C)."""

from __future__ import annotations

import numpy as np

from pyss_adapter.core.placement.experiments import g1_grid, g1_rows, g1_sources, t0_rows
from pyss_adapter.core.placement.gpa import Estimator, m_q, pack, rebalance


def test_t0_least_allocated_spreads_and_tlp_packs() -> None:
    rows = {r["policy"]: r for r in t0_rows(seed=0, nodes=10, pods=40)}
    assert rows["least-allocated"]["nodes_used"] == 10  # 4 pods each by requests
    assert rows["tlp X=50"]["nodes_used"] < 10
    assert all(0 <= r["under_x"] <= 1 and 0 <= r["fragmented"] <= 1 for r in rows.values())


def test_g1_gaussian_control_keeps_q_near_or_below_rho() -> None:
    """Each machine's exceedance is <= rho by construction when items are Gaussian."""
    u = np.random.default_rng(0).uniform(0.3, 0.95, 300)
    x, c = dict(g1_sources(None, u, (0.1,), 400, seed=1))["gauss 0.1"]
    rows = g1_rows(x, c, instances=2, items=300, seed=2, estimators=[("gpa", 0.1), ("av", 1.0)])
    gpa, av = rows
    assert gpa["q"] <= 1.1 * 0.1
    assert av["q"] >= 0.3  # packing by means overloads about half the machines' samples
    assert av["m_abs"] <= gpa["m_abs"]


def test_g1_machines_grow_as_the_estimator_gets_stricter() -> None:
    u = np.random.default_rng(1).uniform(0.3, 0.95, 200)
    x, c = dict(g1_sources(None, u, (0.1,), 300, seed=3))["swf-beta 0.1"]
    est = [("gpa", 0.1), ("gpa", 0.01), ("gpa", 0.001)]
    m = [r["m_abs"] for r in g1_rows(x, c, instances=2, items=200, seed=4, estimators=est)]
    assert m == sorted(m)


def _g1_plain(x_all, c, *, instances, items, seed, fit, rebal, observe, estimators):
    """The protocol as first written: each instance copied, its own statistics, every
    case packed and evaluated on its own."""
    rng = np.random.default_rng(seed)
    draws = [rng.choice(len(x_all), size=items, replace=False) for _ in range(instances)]
    out = []
    for kind, param in estimators:
        est, res = Estimator(kind, float(param)), []
        for pick in draws:
            x = x_all[pick]
            n_obs = int(np.ceil(observe * x.shape[1]))
            obs, ev = (x, x) if observe >= 1 else (x[:, :n_obs], x[:, n_obs:])
            mu, sigma = obs.mean(axis=1), obs.std(axis=1)
            perc = np.percentile(obs, param, axis=1) if kind == "perc" else None
            bins = pack(mu, sigma, est, c, fit, perc)
            if rebal:
                bins = rebalance(bins, mu, sigma, est, c, perc)
            res.append(m_q(ev, bins, c))
        arr = np.asarray(res)
        out.append((arr[:, 0].mean(), arr[:, 1].mean(), arr[:, 2].mean()))
    return out


def test_g1_grid_gives_the_plain_protocol_s_numbers_exactly() -> None:
    """Statistics over the pool, one pack per fit, shared evaluations and an F-ordered
    pool change no digit: every mean equals the plain computation's, bit for bit."""
    rng = np.random.default_rng(5)
    u = rng.uniform(0.3, 0.99, 400)
    x_all = np.asfortranarray(np.clip(u[:, None] + 0.1 * rng.standard_normal((400, 300)), 0, 1))
    est = [("gpa", 0.05), ("cantelli", 1.7), ("av", 1.25), ("perc", 90), ("perc", 100)]
    cases = [("best", False), ("first", False), ("best", True), ("first", True)]
    run = dict(instances=3, items=150, seed=6, estimators=est)
    for observe in (1.0, 0.3):
        grid = g1_grid(x_all, 16.0, cases=cases, observe=observe, **run)
        for fit, rebal in cases:
            plain = _g1_plain(x_all, 16.0, fit=fit, rebal=rebal, observe=observe, **run)
            got = [(r["m_abs"], r["m"], r["q"]) for r in grid[(fit, rebal)]]
            assert got == plain
            assert any(q > 0 for _, _, q in got)  # the comparison covers violations
        one = g1_rows(x_all, 16.0, fit="first", rebal=True, observe=observe, **run)
        assert one == grid[("first", True)]


def test_sizer_is_size_bit_for_bit() -> None:
    rng = np.random.default_rng(8)
    sums = rng.uniform(0, 3, (200, 4))
    sums[:5, 1] = [0.0, -0.0, -1e-17, 1e-300, 0.5]
    for kind, param in [("gpa", 0.01), ("cantelli", 1.7), ("av", 1.25), ("perc", 90), ("slots", 0)]:
        est = Estimator(kind, float(param))
        fast = est.sizer()
        assert [fast(*row) for row in sums.tolist()] == [est.size(*row) for row in sums.tolist()]


def test_m_q_on_pool_rows_equals_m_q_on_the_copied_instance() -> None:
    rng = np.random.default_rng(7)
    pool = rng.uniform(0, 0.6, (50, 40))
    rows = np.array([7, 3, 41, 12, 30])
    bins = [[0, 2], [4, 1], [3]]
    assert m_q(pool, bins, 1.0, rows=rows) == m_q(pool[rows], bins, 1.0)
    assert m_q(pool, bins, 1.0, rows=rows)[2] > 0


def test_rebalance_fills_the_last_machine_from_the_largest_others() -> None:
    mu, sigma = np.array([0.6, 0.6, 0.3]), np.zeros(3)
    # L = {2} (0.3) takes item 0 (0.6, from the first of two equal machines); then nothing fits.
    assert rebalance([[0], [1], [2]], mu, sigma, Estimator("av", 1.0)) == [[1], [2, 0]]


def test_g0_gaussian_items_are_rarely_rejected_and_skewed_items_often() -> None:
    """A-D at 5% rejects about 5% of sums of Gaussian items; sums of a few strongly
    skewed items (exponential realisations) are rejected nearly always."""
    from pyss_adapter.core.placement.experiments import g0_rows

    rng = np.random.default_rng(5)
    gauss = rng.normal(1.0, 0.2, size=(60, 2000))
    skewed = rng.exponential(1.0, size=(60, 2000)) ** 3
    g = g0_rows(gauss, sets=40, draws=500, seed=1, sizes=(10,))[0]
    s = g0_rows(skewed, sets=40, draws=500, seed=1, sizes=(10,))[0]
    assert g["rejected"] <= 0.2
    assert s["rejected"] >= 0.9
    assert abs(g["err_p90"]) < 0.02  # the Gaussian percentile is right for Gaussian sums


def test_g0_verdict_needs_the_fall_from_50_to_500_items() -> None:
    from pyss_adapter.core.placement.verdicts import g0_verdicts

    rows = [{"source": "a", "n_items": 50, "rejected": 0.7},
            {"source": "a", "n_items": 500, "rejected": 0.3},
            {"source": "b", "n_items": 50, "rejected": 0.1},
            {"source": "b", "n_items": 500, "rejected": 0.2}]  # fmt: skip
    g0_verdicts(rows)
    assert [r["verdict"] for r in rows] == [
        "consistent", "direction only", "not reproduced", "not reproduced"
    ]  # fmt: skip


def test_rebalance_row_verdict_compares_q_with_the_same_fit_without_it() -> None:
    from pyss_adapter.core.placement.verdicts import g1_pair_verdicts

    base = {"source": "s", "c": 1.0, "estimator": "gpa 0.1", "seed": "", "verdict": "x"}
    rows = [{**base, "fit": "BF", "m_abs": 30.0, "q": 0.10},
            {**base, "fit": "BF + rebalance", "m_abs": 30.0, "q": 0.093, "verdict": ""},
            {**base, "fit": "FF", "m_abs": 32.0, "q": 0.10, "verdict": ""}]  # fmt: skip
    g1_pair_verdicts(rows)
    assert rows[1]["verdict"] == "consistent"  # a 7% fall
    assert rows[2]["verdict"] == "not reproduced"  # two machines more than BF


def test_c1_verdict_needs_cash_to_cut_the_round_robin_slowdown() -> None:
    from pyss_adapter.core.placement.verdicts import c1_verdicts

    base = {"trace": "t", "k": 1.0, "b0": "zero", "surplus_usd": 0.0, "credit_std": 1.0}
    rows = [{**base, "policy": "round-robin", "degradation": 0.30},
            {**base, "policy": "cash whole_first", "degradation": 0.35},
            {**base, "k": 2.0, "policy": "round-robin", "degradation": 0.30},
            {**base, "k": 2.0, "policy": "cash whole_first", "degradation": 0.10}]  # fmt: skip
    c1_verdicts(rows)
    assert [r["verdict"] for r in rows] == [
        "consistent", "not reproduced", "consistent", "consistent"
    ]  # fmt: skip


def test_q_verdict_says_below_when_ours_is_zero_and_the_seed_s_is_not() -> None:
    from pyss_adapter.core.placement.verdicts import q_verdict

    assert q_verdict(0.0, 2e-8) == "not reproduced (ours below)"
    assert q_verdict(3e-7, 0.0) == "not reproduced (ours above the seed's)"
    assert q_verdict(0.0, 0.0) == "consistent"
    assert q_verdict(1.5e-6, 1e-6) == "consistent"
