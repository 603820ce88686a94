"""``P(start within T)`` counting the jobs still waiting (``predictor.core.wait.km_within``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import CensoredData, ecdf

from predictor.core.wait.km_within import km_within, p_within_censored
from predictor.core.wait.p_within import p_within


def test_the_estimate_is_scipy_s_kaplan_meier_ties_and_all() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(5, 60))
        x = rng.integers(0, 12, n).astype(float) * 100.0  # many ties, starts and waits at once
        started = rng.random(n) < 0.6
        if not started.any():
            started[0] = True
        fit = ecdf(CensoredData(uncensored=x[started], right=x[~started]))
        for t in (0.0, 250.0, 500.0, 1100.0, 5000.0):
            assert km_within(x, started, t) == pytest.approx(float(fit.cdf.evaluate(t)))


def test_with_every_job_started_it_is_the_share_that_started_within() -> None:
    rng = np.random.default_rng(4)
    pred, wait = rng.exponential(900.0, 300), rng.exponential(1200.0, 300)
    asked = np.array([0.0, 60.0, 900.0, 20000.0])
    for t in (60.0, 600.0, 3600.0):
        got = p_within_censored(asked, pred, wait, np.ones(300, bool), t)
        np.testing.assert_array_equal(got, p_within(asked, pred, wait, t))


def test_a_job_still_waiting_past_t_lowers_the_chance_the_started_alone_give() -> None:
    """Two started within 600 s of four started; one more has waited 1,000 s so far: the
    started alone say 2/4, Kaplan-Meier 1 - (1 - 1/5)(1 - 1/4) = 0.4 (it is at risk at both
    starts). Had it waited only 100 s so far, it would leave the set before either start."""
    waited = np.array([100.0, 500.0, 900.0, 2000.0, 1000.0])
    started = np.array([True, True, True, True, False])
    assert km_within(waited[:4], started[:4], 600.0) == pytest.approx(0.5)
    assert km_within(waited, started, 600.0) == pytest.approx(0.4)
    early = np.array([200.0, 500.0, 900.0, 2000.0, 100.0])
    assert km_within(early, started, 600.0) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        km_within(np.array([]), np.array([], bool), 600.0)
