"""CASH and T3 nodes inside replays (spec placement.md §2.4, invariant I-6)."""

from __future__ import annotations

import numpy as np

from pyss_adapter.core.jobs import sim_jobs_from_arrays
from pyss_adapter.core.placement import make_placement
from pyss_adapter.core.placement.usage import usage_for_jobs
from pyss_adapter.core.replay import replay_jobs


def _jobs(n: int = 80):
    rng = np.random.default_rng(5)
    submit = np.sort(rng.integers(0, 40_000, n)).astype(float)
    runtime = rng.choice([600.0, 3600.0, 7200.0], n)
    jobs = sim_jobs_from_arrays(submit, runtime, runtime * 2, rng.choice([1, 4, 8], n), 16)
    return jobs.__class__(**{**jobs.__dict__, "cpu_frac": rng.uniform(0.5, 1.0, n)})


def _run(name: str, **opt):
    jobs = _jobs()
    p = make_placement(name, **opt)
    result = replay_jobs(jobs, placement=p, usage=usage_for_jobs(jobs), cores_per_node=(8, "given"))
    return result, p


def test_credits_off_keeps_the_schedule_of_no_placement_and_round_robin() -> None:
    """I-6: credits off == round-robin == no placement (starts and ends)."""
    plain = replay_jobs(_jobs())
    for name in ("cash", "t3-round-robin"):
        result, _ = _run(name, credits="off")
        np.testing.assert_array_equal(result.start_s, plain.start_s)
        np.testing.assert_array_equal(result.end_s, plain.end_s)


def test_empty_buckets_slow_jobs_down_and_credits_balance() -> None:
    """Standard mode from zero credits: busy nodes throttle, jobs take longer, and per
    node earned - consumed - discarded = B_end - B0 (to 1e-6 relative)."""
    plain = replay_jobs(_jobs())
    result, p = _run("t3-round-robin")
    assert (result.end_s - result.start_s).sum() > (plain.end_s - plain.start_s).sum() * 1.05
    assert result.placement["metrics"]["throttled_share"] > 0
    lhs = p.earned - p.consumed - p.discarded
    np.testing.assert_allclose(lhs, p.B - p.B0, rtol=1e-6, atol=1e-6)
    assert (p.B >= -1e-9).all() and (p.B <= p.cap + 1e-9).all()
    np.testing.assert_allclose(result.runtime_s, result.end_s - result.start_s)


def test_full_buckets_never_throttle_a_light_load() -> None:
    result, _ = _run("cash", t3_initial="full")
    plain = replay_jobs(_jobs())
    assert result.placement["metrics"]["throttled_share"] == 0
    np.testing.assert_array_equal(result.end_s, plain.end_s)


def test_unlimited_mode_bills_surplus_and_never_slows() -> None:
    result, _ = _run("cash", t3_mode="unlimited")
    plain = replay_jobs(_jobs())
    np.testing.assert_array_equal(result.end_s, plain.end_s)
    assert result.placement["metrics"]["surplus_usd"] > 0
