"""State sweep and APQ on a slice of a real trace (the first 3000 jobs of KTH-SP2)."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.state.sweep import compute_state
from predictor.core.wait.apq import APQ
from predictor.core.wait.types import WaitContext
from tests.core.test_state import brute_state
from traces.core.swf import read_swf

pytestmark = pytest.mark.realtrace


@pytest.fixture(scope="module")
def kth_slice(shared_traces):
    return (
        read_swf(shared_traces / "KTH-SP2-1996-2.1-cln.swf.gz")
        .jobs.iloc[:3000]
        .reset_index(drop=True)
    )


def test_sweep_equals_brute_force_on_real_jobs(kth_slice):
    sweep = compute_state(kth_slice)
    for i in range(0, 3000, 97):
        expected, _ = brute_state(kth_slice, i)
        np.testing.assert_allclose(sweep.summary[i], expected, err_msg=f"row {i}")


def test_apq_answers_every_real_target_with_support(kth_slice):
    ctx = WaitContext(kth_slice, compute_state(kth_slice), n_tune=1000, machine_procs=100)
    apq = APQ(tune_targets=100).fit(ctx)
    targets = np.arange(1000, 3000, 10)
    targets = targets[ctx.state.arrays.present[targets]]
    got = apq.predict_rows(targets)
    assert np.all(np.isfinite(got.wait_s)) and np.all(got.wait_s >= 0)
    assert np.all(got.support >= 1)
    assert "fallback_median" not in set(got.predictor)  # 1000 jobs of history is enough
