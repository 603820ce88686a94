"""The ``trace`` usage model (spec placement.md §1.5): the cores a job used at each offset
from its start, held until the next row, divided by its processors; ``u_j`` elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

from pyss_adapter.core.jobs import sim_jobs_from_arrays
from pyss_adapter.core.placement import make_placement
from pyss_adapter.core.placement.usage import (
    UsageError,
    UsageModel,
    read_usage_trace,
    usage_for_jobs,
)
from pyss_adapter.core.replay import replay_jobs


def _model(series: dict, u: float = 0.3) -> UsageModel:
    return UsageModel(
        u=np.array([u, u]), job_id=np.array([5, 6]), model="trace", sample_s=300.0, t0=0.0,
        series=series, procs=np.array([4, 2]), start_s=[1000.0, 0.0],
    )  # fmt: skip


def test_trace_use_holds_each_row_until_the_next_and_divides_by_the_processors() -> None:
    # Job 5 (p = 4) starts at 1000 s: rows at offsets 0, 600, 900 with 2, 4, 1 cores.
    m = _model({5: (np.array([0.0, 600.0, 900.0]), np.array([2.0, 4.0, 1.0]))})
    # t_k = 300 k: k = 3 -> offset -100 (before the start: u); k = 4 -> 200 (2/4);
    # k = 6 -> 800 (4/4); k = 7 -> 1100 (1/4, held to the end).
    got = m.trace_use(np.array([0, 0, 0, 0, 1]), np.array([3, 4, 6, 7, 4]))
    assert got.tolist() == [0.3, 0.5, 1.0, 0.25, 0.3]  # job 6 is not in the file: u
    assert m.ranks_use(0, np.arange(3), 6).tolist() == [1.0, 1.0, 1.0]


def test_trace_sigma_is_the_std_of_the_recorded_fractions() -> None:
    m = _model({5: (np.array([0.0, 600.0]), np.array([2.0, 4.0]))})
    assert m.sigma_of(0, 0.3) == pytest.approx(0.25)  # fractions 0.5 and 1.0
    assert m.sigma_of(1, 0.3) == 0.0


def test_read_usage_trace_sorts_rows_and_names_a_bad_line(tmp_path) -> None:
    good = tmp_path / "use.csv"
    good.write_text("job_id,t_offset_s,cores_used\n7,600,3\n7,0,1\n8,0,2\n")
    series = read_usage_trace(good)
    assert series[7][0].tolist() == [0.0, 600.0] and series[7][1].tolist() == [1.0, 3.0]
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,t_offset_s,cores_used\n7,0,1\n7,60,-2\n")
    with pytest.raises(UsageError, match="line 3"):
        read_usage_trace(bad)
    with pytest.raises(UsageError, match="cores_used"):
        (tmp_path / "cols.csv").write_text("job_id,t_offset_s\n1,0\n")
        read_usage_trace(tmp_path / "cols.csv")


def test_a_trace_equal_to_the_mean_gives_the_constant_models_metrics() -> None:
    rng = np.random.default_rng(4)
    n = 40
    submit = np.sort(rng.integers(0, 20_000, n)).astype(float)
    runtime = rng.choice([600.0, 3000.0, 7200.0], n)
    procs = rng.choice([1, 2, 4, 8], n)
    jobs = sim_jobs_from_arrays(submit, runtime, runtime, procs, 16, user_id=np.zeros(n))
    frac = rng.uniform(0.2, 0.9, n)
    jobs = jobs.__class__(**{**jobs.__dict__, "cpu_frac": frac, "mem_kb": np.full(n, np.nan)})
    flat = {int(j): (np.array([0.0]), np.array([f * p])) for j, f, p in
            zip(jobs.job_id, frac, procs, strict=True)}  # fmt: skip
    half = {j: (np.array([0.0]), v[1] * 0.5) for j, v in flat.items()}

    def metrics(model: str, series: dict | None) -> dict:
        usage = usage_for_jobs(jobs, model=model, series=series)
        result = replay_jobs(jobs, placement=make_placement("first-fit"), usage=usage,
                             cores_per_node=(8, "given"))  # fmt: skip
        return result.placement["metrics"]

    const, trace, halved = metrics("constant", None), metrics("trace", flat), metrics("trace", half)
    assert trace["util_active_mean"] == pytest.approx(const["util_active_mean"], rel=1e-9)
    assert trace["hot_node_share"] == pytest.approx(const["hot_node_share"], rel=1e-9)
    assert halved["util_active_mean"] == pytest.approx(const["util_active_mean"] / 2, rel=1e-9)
