"""The opt-in draw cache of the experiment command gives the metrics of an uncached run
(spec placement.md §1.5: X_{j,r}(k) is keyed by job, rank and block, never by node)."""

from __future__ import annotations

import numpy as np
import pytest

from pyss_adapter.core.jobs import sim_jobs_from_arrays
from pyss_adapter.core.placement import make_placement
from pyss_adapter.core.placement.usage import usage_for_jobs
from pyss_adapter.core.replay import replay_jobs


def _jobs():
    rng = np.random.default_rng(7)
    n = 80
    submit = np.sort(rng.integers(0, 30_000, n)).astype(float)
    estimate = rng.choice([600.0, 3600.0, 7200.0], n)
    runtime = np.minimum(estimate, rng.choice([0.0, 500.0, 3000.0, 7200.0], n))
    procs = rng.choice([1, 2, 3, 5, 8, 12], n)
    jobs = sim_jobs_from_arrays(submit, runtime, estimate, procs, 20, user_id=np.arange(n) % 3)
    frac = rng.uniform(0.1, 1.0, n)
    return jobs.__class__(**{**jobs.__dict__, "cpu_frac": frac, "mem_kb": np.full(n, np.nan)})


@pytest.mark.parametrize("corr", ["rank", "job"])
def test_cached_draws_give_the_uncached_metrics_for_each_placement(corr: str) -> None:
    jobs = _jobs()
    shared = usage_for_jobs(jobs, model="beta", seed=2, corr=corr)
    shared.memo = {}
    for name in ("least-allocated", "tlp", "lvrb", "first-fit", "gpa", "pool-slots"):
        fresh = usage_for_jobs(jobs, model="beta", seed=2, corr=corr)
        plain = replay_jobs(jobs, placement=make_placement(name), usage=fresh,
                            cores_per_node=(8, "given")).placement["metrics"]  # fmt: skip
        cached = replay_jobs(jobs, placement=make_placement(name), usage=shared,
                             cores_per_node=(8, "given")).placement["metrics"]  # fmt: skip
        for key, value in plain.items():
            if isinstance(value, float):
                assert cached[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
            else:
                assert cached[key] == value, key
    assert len(shared.memo) > 0


def test_the_load_watcher_reads_kept_draws_and_places_alike() -> None:
    """TLP and LVRB sample use each minute; with draws kept they place every piece as
    without (a kept draw is the same number)."""
    jobs = _jobs()
    shared = usage_for_jobs(jobs, model="beta", seed=3)
    shared.memo = {}
    replay_jobs(jobs, placement=make_placement("first-fit"), usage=shared,
                cores_per_node=(8, "given"))  # fmt: skip
    for name in ("tlp", "lvrb"):
        fresh = usage_for_jobs(jobs, model="beta", seed=3)
        a = replay_jobs(jobs, placement=make_placement(name), usage=fresh,
                        cores_per_node=(8, "given")).placement_log  # fmt: skip
        b = replay_jobs(jobs, placement=make_placement(name), usage=shared,
                        cores_per_node=(8, "given")).placement_log  # fmt: skip
        assert np.array_equal(a["node"], b["node"]) and np.array_equal(a["job"], b["job"])
