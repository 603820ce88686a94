"""Load functions: longest chain with the step limit, DBSCAN bins, line fit, tuple choice."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.runtime.load_functions import (
    bin_averages,
    densest_cluster,
    fit_load_functions,
    fit_tuple_function,
    longest_chain,
)
from predictor.core.runtime.params import RuntimeParams
from tests.core.test_load import make_jobs


def test_longest_chain_skips_a_dip_and_keeps_the_longest_path() -> None:
    loads = [0.1, 0.2, 0.3, 0.4, 0.5]
    runtimes = [100, 140, 130, 180, 260]
    # 100 -> 140 -> 180 -> 260 (steps 40 %, 29 %, 44 %); 130 cannot follow 140.
    assert longest_chain(loads, runtimes, 0.5).tolist() == [0, 1, 3, 4]


def test_longest_chain_respects_the_step_limit() -> None:
    # 100 -> 200 is a 100 % step: not an edge with X = 50 %, so the chain is 200 -> 210.
    assert longest_chain([0.1, 0.2, 0.3], [100, 200, 210], 0.5).tolist() == [1, 2]
    # With X = 150 % the whole sequence is one chain.
    assert longest_chain([0.1, 0.2, 0.3], [100, 200, 210], 1.5).tolist() == [0, 1, 2]


def test_longest_chain_orders_by_load_not_by_input_position() -> None:
    assert longest_chain([0.5, 0.1, 0.3], [300, 200, 250], 0.5).tolist() == [1, 2, 0]


def test_longest_chain_of_nothing_is_empty() -> None:
    assert longest_chain([], [], 0.5).size == 0


def test_densest_cluster_drops_the_outlier_application() -> None:
    mask = densest_cluster(np.array([100.0, 105, 98, 5000, 5100]), eps=0.2, min_samples=2)
    assert mask.tolist() == [True, True, True, False, False]


def test_bin_averages_average_the_cluster_in_each_bin() -> None:
    loads = np.array([0.12, 0.13, 0.14, 0.62, 0.63])
    runtimes = np.array([100.0, 110, 9000, 200, 220])
    bin_l, bin_r = bin_averages(loads, runtimes, RuntimeParams())
    np.testing.assert_allclose(bin_l, [0.125, 0.625])
    np.testing.assert_allclose(bin_r, [105, 210])


def test_fit_tuple_function_recovers_a_linear_trend() -> None:
    loads = np.repeat([0.1, 0.3, 0.5, 0.7], 3)
    runtimes = 1000 + 500 * loads
    fn = fit_tuple_function((1, 4, 1, 1), loads, runtimes, RuntimeParams())
    assert fn is not None
    assert fn.slope == pytest.approx(500)
    assert fn.intercept == pytest.approx(1000)
    assert len(fn.chain_loads) == 4
    assert fn(0.2) == pytest.approx(1100)


def test_fit_load_functions_needs_enough_jobs_and_load_span() -> None:
    rows, loads = [], []
    for i, load in enumerate(np.repeat([0.1, 0.3, 0.5, 0.7], 3)):  # user 1: span 0.6
        rows.append({"submit_time": i, "run_time": 1000 + 500 * load, "user_id": 1})
        loads.append(load)
    for i in range(12):  # user 2: same count, span 0.1 < m
        rows.append({"submit_time": 100 + i, "run_time": 50, "user_id": 2})
        loads.append(0.4 + 0.1 * (i % 2))
    functions = fit_load_functions(make_jobs(rows), np.array(loads))
    assert [f.tuple_key[0] for f in functions] == [1]
    few = fit_load_functions(make_jobs(rows), np.array(loads), RuntimeParams(min_tuple_jobs=13))
    assert few == []


def test_densest_cluster_on_a_line_gives_sklearns_dbscan_labels() -> None:
    from sklearn.cluster import DBSCAN

    from predictor.core.runtime.load_functions import dbscan_labels_1d

    rng = np.random.default_rng(0)
    compared = 0
    for trial in range(400):
        n = int(rng.integers(1, 80))
        if trial % 3 == 0:
            x = np.log(rng.integers(1, 5000, n).astype(float))
        elif trial % 3 == 1:
            x = rng.normal(0.0, 0.4, n)
        else:  # few distinct values: ties, duplicates and border points between clusters
            x = np.log(rng.choice([60.0, 61.0, 70.0, 80.0, 100.0, 3600.0, 3601.0], n))
        min_samples = int(rng.integers(1, 6))
        got = dbscan_labels_1d(x, 0.2, min_samples)
        want = DBSCAN(eps=0.2, min_samples=min_samples).fit(x.reshape(-1, 1)).labels_
        if got is not None:
            compared += 1
            assert np.array_equal(got, want), (x.tolist(), min_samples)
    assert compared > 300


def test_a_pair_at_distance_eps_is_left_to_sklearn() -> None:
    from predictor.core.runtime.load_functions import dbscan_labels_1d

    assert dbscan_labels_1d(np.array([0.0, 0.2, 1.0]), 0.2, 2) is None
    assert dbscan_labels_1d(np.array([0.0, 0.1, 1.0]), 0.2, 2).tolist() == [0, 0, -1]
