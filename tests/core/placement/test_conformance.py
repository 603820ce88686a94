"""Every conformance vector of spec placement.md (§2.2-§2.5), each naming its source.

Integers must be equal; floats agree to 1e-9. Sources: U = kubernetes-sigs/scheduler-plugins
@ 903da7df (pkg/trimaran/**), K = its KEP 61 worked example, KU = kubernetes/kubernetes
least_allocated_test.go, A = awsdocs/amazon-ec2-user-guide @ 0147f878, O = ours (derived in
the spec from the seed's formulas).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import betaincinv

from pyss_adapter.core.placement.base import go_round
from pyss_adapter.core.placement.baselines import least_allocated_score
from pyss_adapter.core.placement.cash import T3Bucket, break_even, cash_pieces, surplus_usd
from pyss_adapter.core.placement.gpa import Estimator, m_q, pack
from pyss_adapter.core.placement.trimaran import (
    lvrb_node_score,
    lvrb_score,
    predict_utilisation,
    tlp_score,
)
from pyss_adapter.core.placement.usage import beta_quantile, h, sm

TOL = 1e-9

# -- GPA (seed 000) ------------------------------------------------------------------------
G_MU, G_SIGMA = np.array([0.2, 0.3, 0.25]), np.array([0.1, 0.1, 0.05])


def _size(est: Estimator) -> float:
    return est.size(G_MU.sum(), (G_SIGMA**2).sum(), 0.0, 3)


@pytest.mark.parametrize(
    ("rho", "size", "fits"),
    [(0.1, 0.9422, True), (0.05, 0.9967, True), (0.01, 1.0990, False), (0.001, 1.2135, False)],
)
def test_g1_gpa_fit_test_ours(rho: float, size: float, fits: bool) -> None:
    """G-1 (O): sum mu 0.75, sqrt(sum sigma^2) 0.15, c = 1."""
    got = _size(Estimator("gpa", rho))
    assert got == pytest.approx(size, abs=5e-5)
    assert bool(got <= 1 + TOL) is fits


@pytest.mark.parametrize(
    ("b", "size", "fits"), [(1.0, 0.9, True), (1.7, 1.005, False), (4.4, 1.41, False)]
)
def test_g2_cantelli_fit_test_ours(b: float, size: float, fits: bool) -> None:
    """G-2 (O): Cantelli b; the 4.4 bound 1/(1 + 4.4^2) = 0.0491."""
    got = _size(Estimator("cantelli", b))
    assert abs(got - size) < TOL
    assert bool(got <= 1 + TOL) is fits
    assert 1 / (1 + 4.4**2) == pytest.approx(0.0491, abs=5e-5)


@pytest.mark.parametrize(
    ("f", "size", "fits"), [(1.0, 0.75, True), (1.25, 0.9375, True), (2.0, 1.5, False)]
)
def test_g3_av_fit_test_ours(f: float, size: float, fits: bool) -> None:
    """G-3 (O)."""
    got = _size(Estimator("av", f))
    assert abs(got - size) < TOL
    assert bool(got <= 1 + TOL) is fits


def test_g4_first_fit_and_best_fit_by_means_ours() -> None:
    """G-4 (O): av 1, c = 1, mu = [0.5, 0.6, 0.3]."""
    mu, sigma = np.array([0.5, 0.6, 0.3]), np.zeros(3)
    assert pack(mu, sigma, Estimator("av", 1.0), 1.0, "first") == [[0, 2], [1]]
    assert pack(mu, sigma, Estimator("av", 1.0), 1.0, "best") == [[0], [1, 2]]


def test_g5_q_m_and_percentiles_ours() -> None:
    """G-5 (O): q = 3/8, m_norm = ceil(1.05) = 2, m = 1; perc 50 and 100."""
    x = np.array([[0.6, 0.2, 0.5, 0.4], [0.5, 0.3, 0.6, 0.7], [0.1, 0.1, 0.1, 0.1]])
    m_abs, m, q = m_q(x, [[0, 1], [2]], 1.0)
    assert (m_abs, m) == (2, 1.0)
    assert abs(q - 0.375) < TOL
    np.testing.assert_allclose(
        Estimator("perc", 50).item_percentiles(x), [0.45, 0.55, 0.10], atol=TOL
    )
    np.testing.assert_allclose(
        Estimator("perc", 100).item_percentiles(x), [0.6, 0.7, 0.1], atol=TOL
    )


def test_g6_splitmix_hash_ours() -> None:
    """G-6 (O)."""
    assert sm(0) == 0xE220A8397B1DCDAF
    assert abs(h(0, 1, 0, 0) - 0.6935121390102292) < TOL
    assert abs(h(7, 123456, 3, 42) - 0.9396720029754437) < TOL


def test_g7_beta_model_quantile_ours() -> None:
    """G-7 (O): u = 0.3, rho = 0.1 -> alpha 2.7, beta 6.3, X = 0.366434474..."""
    u, rho = 0.3, 0.1
    alpha, beta = u * (1 - rho) / rho, (1 - u) * (1 - rho) / rho
    assert abs(alpha - 2.7) < TOL and abs(beta - 6.3) < TOL
    x = beta_quantile(np.array([u]), rho, np.array([h(0, 1, 0, 0)]))[0]
    assert abs(x - float(betaincinv(2.7, 6.3, h(0, 1, 0, 0)))) < TOL
    assert abs(x - 0.366434474) < 1e-9


# -- Trimaran (seed 003) ---------------------------------------------------------------------
def _tlp(latest_pct: float, pod_m: float, target: float = 40, cap_m: float = 1000) -> int:
    return tlp_score(latest_pct + 100 * pod_m / cap_m, target)


def test_t1_new_node_u_targetloadpacking_test() -> None:
    """T-1 (U targetloadpacking_test.go "new node"): pod without containers, 0% -> 40."""
    assert _tlp(0, predict_utilisation([])) == 40


def test_t2_hot_node_u() -> None:
    """T-2 (U "hot node"): 50% -> 33."""
    assert _tlp(50, predict_utilisation([])) == 33


def test_t3_excess_utilisation_returns_min_score_u() -> None:
    """T-3 (U): 1 container req = lim = 1000 m on a 1000 m node at 30% -> U = 130 -> 0."""
    assert _tlp(30, predict_utilisation([{"request": 1000, "limit": 1000}])) == 0


def test_t4_no_metrics_scores_min_u() -> None:
    """T-4 (U "404 resp from watcher"): no metrics -> MinNodeScore 0."""
    assert lvrb_node_score(None, None) == 0  # the same rule in both plugins: no metrics, 0


@pytest.mark.parametrize(("use", "score"), [(25, 75), (50, 100), (75, 25)])
def test_t5_kep_worked_example(use: float, score: int) -> None:
    """T-5 (K): X = 50, 4-core nodes, pod 0 m."""
    assert _tlp(use, 0, target=50, cap_m=4000) == score


def test_t6_half_rounds_away_from_zero_ours() -> None:
    """T-6 (O): X = 40, U = 3 -> 44.5 -> 45 (Python's round gives 44)."""
    assert tlp_score(3, 40) == 45
    assert round(44.5) == 44 and go_round(44.5) == 45 and go_round(-44.5) == -45


def test_t7_predicted_pod_use_ours() -> None:
    """T-7 (O): BestEffort -> 1000 m; Burstable 300 m no limit -> 450 m; limit 700 -> 700."""
    assert predict_utilisation([{}]) == 1000
    assert predict_utilisation([{"request": 300}]) == 450
    assert predict_utilisation([{"request": 300, "limit": 700}]) == 700


@pytest.mark.parametrize(
    ("case", "cap", "avg", "std", "margin", "sens", "score"),
    [
        ("valid", 100, 40, 36, 1, 1, 57),
        ("cap 0", 0, 40, 36, 1, 2, 0),
        ("avg -40", 100, -40, 36, 1, 2, 65),
        ("avg 200", 100, 200, 36, 1, 2, 20),
        ("std -36", 100, 40, -36, 1, 2, 75),
        ("std 120", 100, 40, 120, 1, 2, 25),
        ("margin -1", 100, 40, 36, -1, 1, 75),
        ("sens -1", 100, 40, 36, 1, -1, 57),
        ("sens 0", 100, 40, 36, 1, 0, 75),
    ],
)
def test_l1_to_l9_compute_score_u_analysis_test(case, cap, avg, std, margin, sens, score) -> None:
    """L-1..9 (U analysis_test.go TestComputeScore): Req 10 unless noted."""
    assert go_round(lvrb_score(10, cap, avg, std, margin, sens)) == score, case


MI = 1024  # MiB


@pytest.mark.parametrize(
    ("case", "cpu", "mem", "score"),
    [
        ("new node", (0, 1000, 50, 0), None, 75),
        ("hot node", (0, 1000, 100, 0), None, 50),
        ("200m/256Mi", (200, 1000, 30, 16), None, 67),
        ("100m/512Mi mem", (100, 1000, 40, 16), (512, MI, 50, 10), 45),
        ("100m/512Mi cpu", (100, 1000, 80, 20), (512, MI, 25, 15), 45),
        ("no metrics", None, None, 0),
    ],
)
def test_l10_to_l15_node_score_u_loadvariationriskbalancing_test(case, cpu, mem, score) -> None:
    """L-10..15 (U loadvariationriskbalancing_test.go): 1000 m / 1024 MiB nodes."""
    assert lvrb_node_score(cpu, mem, 1, 1) == score, case


# -- CASH (seed 001) --------------------------------------------------------------------------
def test_c1_t3_nano_standard_mode_periods_a_standard_mode_examples() -> None:
    """C-1 (A standard-mode-examples.md): t3.nano, B0 = 0, seven periods."""
    b = T3Bucket(vcpus=2, baseline=0.05)
    assert b.earn_per_min * 60 == pytest.approx(6.0) and b.cap == pytest.approx(144.0)
    ends = []
    for hours, pct in [(24, 0), (12, 2.5), (24, 7), (12, 2.5), (2, 60), (14, 5), (24, 0)]:
        demand = 2 * pct / 100
        if pct == 60:
            assert b.time_to_empty_s(demand) / 60 == pytest.approx(111.27, abs=5e-3)
        b.run(hours * 3600, demand)
        ends.append(b.balance)
        if pct == 60:
            assert b.speed(demand) == pytest.approx(0.1 / 1.2)
    np.testing.assert_allclose(ends, [144, 144, 86.4, 122.4, 0, 0, 144], atol=1e-9)
    assert abs(b.earned - b.consumed - b.discarded - b.balance) < 1e-9


def test_c2_unlimited_break_even_a_unlimited_mode_table() -> None:
    """C-2 (A unlimited mode table): t3.large 15 burst-min/h, +12.5%, break-even 42.5%."""
    minutes, extra, even = break_even(0.0835, 0.096, 2, 0.30)
    assert abs(minutes - 15) < 1e-9 and abs(extra - 12.5) < 1e-9 and abs(even - 42.5) < 1e-9
    assert abs(break_even(0.1670, 0.192, 4, 0.40)[2] - 52.5) < 1e-9
    assert abs(break_even(0.334, 0.384, 8, 0.40)[2] - 52.5) < 1e-9


def test_c3_time_to_empty_ours() -> None:
    """C-3 (O): t3.2xlarge, B = 100, D = 5.2 -> 100 / (5.2 - 3.2) = 50 min."""
    b = T3Bucket(vcpus=8, baseline=0.4, balance=100)
    assert abs(b.time_to_empty_s(5.2) - 3000) < 1e-9


def test_c4_throttled_speed_ours() -> None:
    """C-4 (O): throttled at D = 6.4 -> f = 0.5; W = 100 s ends 200 s later; an
    unthrottled second node leaves the job at 0.5 (the slowest node)."""
    throttled, free = T3Bucket(8, 0.4, balance=0.0), T3Bucket(8, 0.4, balance=50.0)
    v = min(throttled.speed(6.4), free.speed(6.4))
    assert v == 0.5 and 100 / v == 200


def test_c5_unlimited_surplus_charged_at_the_end_ours() -> None:
    """C-5 (O): unlimited, B = 0, D = 8 for 60 min -> 288 < 4608 not charged at the hour;
    at the end 288 x 0.05/60 = $0.24."""
    b = T3Bucket(8, 0.4, mode="unlimited")
    b.run(3600, 8.0)
    assert abs(b.balance + 288) < 1e-9
    assert b.charge_hour() == 0
    assert abs(surplus_usd(b.charge_end()) - 0.24) < 1e-9


CREDITS, FREE = [100.0, 500.0, 300.0], [2, 1, 4]


def test_c6_burst_job_by_credits_ours() -> None:
    """C-6 (O): whole_first {n3: 4}; the seed's literal rule {n2: 1, n3: 3}."""
    assert cash_pieces(CREDITS, FREE, 4, "burst", whole_first=True) == [(2, 4)]
    assert cash_pieces(CREDITS, FREE, 4, "burst", whole_first=False) == [(1, 1), (2, 3)]


def test_c7_network_job_one_slot_per_node_per_round_ours() -> None:
    """C-7 (O): least credits first -> {n1: 1, n3: 1, n2: 1}."""
    assert sorted(cash_pieces(CREDITS, FREE, 3, "network")) == [(0, 1), (1, 1), (2, 1)]
    assert [n for n, _ in cash_pieces(CREDITS, FREE, 3, "network")] == [0, 2, 1]


def test_c8_other_job_in_node_id_order_ours() -> None:
    """C-8 (O): non-burst job of 2 -> {n1: 2}."""
    assert cash_pieces(CREDITS, FREE, 2, "other") == [(0, 2)]


# -- Kubernetes default LeastAllocated (baseline) ---------------------------------------------
@pytest.mark.parametrize(
    ("case", "caps", "reqs", "weights", "scores"),
    [
        ("K-1", [(4000, 10000), (6000, 10000)], [(3000, 5000), (3000, 5000)], None, [37, 50]),
        ("K-2", [(10000, 20000)] * 2, [(6000, 0), (6000, 5000)], None, [70, 57]),
        ("K-3", [(10000, 20000)] * 2, [(6000, 5000), (6000, 10000)], None, [57, 45]),
        ("K-4", [(4000, 10000)] * 2, [(6000, 0), (6000, 5000)], None, [50, 25]),
        ("K-5", [(4000, 10000), (6000, 10000)], [(3000, 5000), (3000, 5000)], (1, 2), [41, 50]),
    ],
)
def test_k_least_allocated_ku_least_allocated_test(case, caps, reqs, weights, scores) -> None:
    """K-1..5 (KU least_allocated_test.go): requests are the node's pods + the incoming pod."""
    got = [least_allocated_score(c, r, weights) for c, r in zip(caps, reqs, strict=True)]
    assert got == scores, case
    assert math.isfinite(sum(got))
