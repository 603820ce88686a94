"""Runtime of a molded job: the seed's estimate rule and roulette wheel, Downey's speedup."""

from __future__ import annotations

import numpy as np
import pytest

from jobmolding.core.runtime_models import (
    downey_factor,
    downey_speedup,
    paper_estimate,
    roulette_runtime,
    scaled_rangeset,
)
from predictor.core.runtime.rangeset import RangeSet


def test_smaller_size_takes_the_smallest_of_max_previous_and_limit_above_the_original() -> None:
    assert paper_estimate(8, 3600, 4, 7200, 86400) == 7200
    assert paper_estimate(8, 3600, 4, 1800, 86400) == 86400  # maxPrevious is not above
    assert paper_estimate(8, 3600, 4, float("nan"), 86400) == 86400
    assert paper_estimate(8, 86400, 4, 3600, 86400) == 86400  # nothing above: original kept


def test_larger_size_keeps_the_original_estimate() -> None:
    assert paper_estimate(8, 3600, 16, 7200, 86400) == 3600


def test_roulette_wheel_weights_values_by_frequency_and_repeats_with_a_seed() -> None:
    rng = np.random.default_rng(0)
    draws = np.array([roulette_runtime([10.0, 10.0, 20.0], rng) for _ in range(6000)])
    assert set(np.unique(draws)) == {10.0, 20.0}
    assert (draws == 10.0).mean() == pytest.approx(2 / 3, abs=0.03)
    a = [roulette_runtime([1, 2, 3, 4], np.random.default_rng(7)) for _ in range(3)]
    b = [roulette_runtime([1, 2, 3, 4], np.random.default_rng(7)) for _ in range(3)]
    assert a == b
    with pytest.raises(ValueError, match="no past runtimes"):
        roulette_runtime([], rng)


def test_downey_speedup_starts_at_one_is_continuous_and_saturates_at_a() -> None:
    for sigma in (0.0, 0.5, 1.0, 2.0):
        assert downey_speedup(1, 8, sigma) == pytest.approx(1.0)
        assert downey_speedup(1000, 8, sigma) == pytest.approx(8.0)
    # sigma = 0: linear up to A
    assert downey_speedup(np.array([2, 4, 8]), 8, 0.0).tolist() == pytest.approx([2, 4, 8])
    # continuity at the breakpoints (A and 2A - 1 for sigma <= 1; A + A sigma - sigma above)
    eps = 1e-7
    for a, sigma, knot in ((8, 0.5, 8), (8, 0.5, 15), (8, 2.0, 8 + 16 - 2)):
        left, right = downey_speedup(np.array([knot - eps, knot + eps]), a, sigma)
        assert left == pytest.approx(right, rel=1e-5)


def test_downey_factor_by_hand() -> None:
    # A = n0 = 8, sigma = 1: S(8) = 64 / 11.5, S(4) = 32 / 9.5 -> factor 2 * 9.5 / 11.5
    assert downey_factor(8, 4, None, 1.0) == pytest.approx(2 * 9.5 / 11.5)
    # a one-processor job gains nothing from more processors (A = 1)
    assert downey_factor(1, 16, None, 1.0) == pytest.approx(1.0)


def test_a_scaled_rangeset_keeps_its_probabilities_and_scales_ranges_and_point() -> None:
    rs = RangeSet(np.array([10.0, 40.0]), np.array([20.0, 60.0]), np.array([0.25, 0.75]))
    out = scaled_rangeset(rs, 2.0)
    assert out.low_s.tolist() == [20.0, 80.0] and out.high_s.tolist() == [40.0, 120.0]
    assert out.probability.tolist() == [0.25, 0.75]
    assert out.point_s == pytest.approx(2.0 * rs.point_s)
    assert (
        scaled_rangeset(RangeSet(rs.low_s, rs.high_s, rs.probability, point=30.0), 3.0).point_s
        == 90.0
    )


def test_a_one_second_request_scaled_to_more_processors_still_asks_for_one_second() -> None:
    # HPC2N has 1 s requests; Downey's factor < 1 at a larger size would ask for 0.68 s
    from jobmolding.core.candidates import speedup_candidates

    cands = speedup_candidates(2, np.array([2, 16]), 1.0, 86400.0, 1.0)
    assert cands.factors is not None and cands.factors[1] < 1.0
    assert cands.req_time_s.tolist() == [1.0, 1.0]
