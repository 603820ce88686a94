"""One clock on the demo site (issue 19, item 6): the workload is compressed at generation,
so a site playing it at speed 1 has history and submitted jobs on the same time scale."""

from __future__ import annotations

import numpy as np
import pytest

from pyss_adapter.core.demo import compressed, demo_trace
from traces.core.synthetic import MODELS, generate_lublin


def test_compression_divides_arrivals_runtimes_and_requests_and_keeps_requests_above_runs():
    jobs = generate_lublin(400, 64, rng=np.random.default_rng(1), params=MODELS["all"])
    out = compressed(jobs, 30.0)
    assert out["submit_time"].iloc[-1] == pytest.approx(jobs["submit_time"].iloc[-1] / 30, abs=1)
    ratio = jobs["run_time"].to_numpy(float) / out["run_time"].to_numpy(float)
    long = jobs["run_time"].to_numpy() > 300  # short ones are rounded to whole seconds
    assert np.allclose(ratio[long], 30.0, rtol=0.06)
    assert (out["run_time"] >= 1).all()
    assert (out["requested_time"] >= out["run_time"]).all()


def test_the_demo_trace_waits_are_replayed_on_the_compressed_clock():
    plain = demo_trace(300, 64, seed=1)
    fast = demo_trace(300, 64, seed=1, time_scale=30.0)
    assert fast.jobs["run_time"].median() == pytest.approx(
        plain.jobs["run_time"].median() / 30, rel=0.1
    )
    # the waits come from EASY on the compressed jobs: on the same scale as their runtimes
    assert 0 < fast.jobs["wait_time"].mean() < plain.jobs["wait_time"].mean() / 10
    assert any("divided by 30" in line for line in fast.header.lines)
    with pytest.raises(ValueError, match="time_scale"):
        demo_trace(10, 8, time_scale=0.5)
