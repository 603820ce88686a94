"""One contract test over every registered placement (spec placement.md §3.2, I-4, I-5, I-7, I-8).

A synthetic log with early ends, jobs ending exactly at their estimate (the "busy
until estimate" early release), 0-second jobs, wide and narrow jobs, two users.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pyss_adapter.core.jobs import sim_jobs_from_arrays
from pyss_adapter.core.placement import PLACEMENT_NAMES, make_placement
from pyss_adapter.core.placement.base import PlacementError
from pyss_adapter.core.placement.usage import usage_for_jobs
from pyss_adapter.core.replay import replay_jobs

P = 20  # processors: two nodes of 8 and one of 4 at C = 8


def _jobs(cpu_frac: np.ndarray | None = None):
    rng = np.random.default_rng(3)
    n = 120
    submit = np.sort(rng.integers(0, 20_000, n)).astype(float)
    estimate = rng.choice([60.0, 600.0, 3600.0, 7200.0], n)
    runtime = np.minimum(estimate, rng.choice([0.0, 30.0, 500.0, 3000.0, 7200.0], n))
    runtime[::7] = estimate[::7]  # ends exactly at the estimate: processors back early
    procs = rng.choice([1, 1, 2, 3, 5, 8, 12, 20], n)
    jobs = sim_jobs_from_arrays(submit, runtime, estimate, procs, P, user_id=np.arange(n) % 2)
    frac = rng.uniform(0.1, 1.0, n) if cpu_frac is None else cpu_frac
    return jobs.__class__(**{**jobs.__dict__, "cpu_frac": frac, "mem_kb": np.full(n, np.nan)})


def _run(name: str, jobs=None, knowledge: str = "oracle", model: str = "beta", **opt):
    jobs = _jobs() if jobs is None else jobs
    usage = usage_for_jobs(jobs, model=model, knowledge=knowledge, seed=1)
    return replay_jobs(
        jobs, placement=make_placement(name, **opt), usage=usage, cores_per_node=(8, "given")
    )


@pytest.fixture(scope="module")
def baseline():
    return replay_jobs(_jobs())


@pytest.mark.parametrize("name", PLACEMENT_NAMES)
def test_observer_placement_keeps_every_start_and_end(name: str, baseline) -> None:
    """I-3 on a synthetic log: an observer never changes the schedule."""
    opt = {"credits": "off"} if name in ("cash",) or name.startswith("t3-") else {}
    result = _run(name, **opt)
    assert np.array_equal(result.start_s, baseline.start_s)
    assert np.array_equal(result.end_s, baseline.end_s)
    assert result.placement["name"] == name


@pytest.mark.parametrize("name", PLACEMENT_NAMES)
def test_placement_is_deterministic_for_a_seed(name: str) -> None:
    """I-7: same inputs and seed, identical JSON byte for byte."""
    first = json.dumps(_run(name).placement, sort_keys=True)
    assert first == json.dumps(_run(name).placement, sort_keys=True)


class _Spy:
    """A placement that forwards everything to ``inner``; ``on_start`` runs
    ``start(inner, engine, j, now)``, which places the job and checks around it."""

    def __init__(self, inner, start):
        self.inner, self.start = inner, start

    def __getattr__(self, key):
        return getattr(self.inner, key)

    def on_start(self, engine, j, now):
        self.start(self.inner, engine, j, now)

    def on_finish(self, engine, j, now):
        self.inner.on_finish(engine, j, now)


def _cluster_names() -> list[str]:
    return [n for n in PLACEMENT_NAMES if make_placement(n).framing == "cluster"]


@pytest.mark.parametrize("name", _cluster_names())
def test_cluster_slots_never_overflow_and_pieces_sum_to_the_job(name: str) -> None:
    """I-4: at every instant 0 <= allocated <= cores; pieces sum to p; free slots = engine.free."""
    p = make_placement(name)
    jobs = _jobs()
    usage = usage_for_jobs(jobs, model="constant")
    seen = []

    def record(inner, engine, j, now):
        inner.on_start(engine, j, now)
        seen.append((sum(inner.free), engine.free, list(inner.free)))

    spy = _Spy(p, record)
    result = replay_jobs(jobs, placement=spy, usage=usage, cores_per_node=(8, "given"))
    assert result.placement["cluster"]["nodes"] == 3
    for total, free, per_node in seen:
        assert total == free
        assert all(0 <= f <= c for f, c in zip(per_node, [8, 8, 4], strict=True))
    log = p.log.arrays()
    per_job = np.bincount(log["job"], weights=log["cores"], minlength=len(jobs))
    np.testing.assert_array_equal(per_job, result.n_procs)
    assert np.all(log["t_off"] >= log["t_on"])
    assert sum(p.free) == P  # everything freed at the end


@pytest.mark.parametrize("name", [n for n in PLACEMENT_NAMES if n not in _cluster_names()])
def test_pool_nodes_pass_their_fit_test_and_close_when_empty(name: str) -> None:
    """I-5: every node passes the estimator's test after each insertion; empty nodes
    close; a node opens with the lowest id not in use."""
    p = make_placement(name, pool_cores=4)
    jobs = _jobs()
    usage = usage_for_jobs(jobs, model="beta")
    checked = []

    def check(inner, engine, j, now):
        in_use = {n for n in range(len(inner.sums)) if n not in inner.closed}
        first = len(inner.log.job)
        inner.on_start(engine, j, now)
        new = sorted({inner.log.node[i] for i in range(first, len(inner.log.job))} - in_use)
        free_ids = sorted(set(range(len(inner.sums))) - in_use)
        assert new == free_ids[: len(new)]
        for s in inner.sums:
            assert s[3] == 0 or inner.estimator.size(*s) <= inner.pool_cores + 1e-9
        checked.append(j)

    replay_jobs(jobs, placement=_Spy(p, check), usage=usage, cores_per_node=(8, "given"))
    assert len(checked) == len(jobs)
    assert sorted(p.closed) == list(range(len(p.sums)))  # all closed at the end
    assert all(abs(s[3]) == 0 for s in p.sums)


@pytest.mark.parametrize("name", PLACEMENT_NAMES)
def test_history_knowledge_never_reads_the_future(name: str) -> None:
    """I-7 leakage: two logs that differ only in the use of jobs not finished yet place alike."""
    jobs = _jobs()
    late = jobs.submit_s >= np.quantile(jobs.submit_s, 0.6)
    other = jobs.cpu_frac.copy()
    other[late] = 1.0 - other[late] * 0.5
    changed = jobs.__class__(**{**jobs.__dict__, "cpu_frac": other})
    cut = float(jobs.submit_s[late].min())
    logs = []
    for log_jobs in (jobs, changed):
        p = make_placement(name)
        usage = usage_for_jobs(log_jobs, model="constant", knowledge="history")
        replay_jobs(log_jobs, placement=p, usage=usage, cores_per_node=(8, "given"))
        arr = p.log.arrays()
        before = arr["t_on"] < cut
        logs.append([arr[k][before].tolist() for k in ("job", "node", "cores")])
    assert logs[0] == logs[1]
    assert len(logs[0][0]) > 10


def test_unknown_option_and_name_are_named() -> None:
    with pytest.raises(ValueError, match="no option 'targett'"):
        make_placement("tlp", targett=40)
    with pytest.raises(ValueError, match="placement must be one of"):
        make_placement("nope")
    with pytest.raises(ValueError, match="must be a number"):
        make_placement("tlp", target="high")


def test_a_schedule_over_the_machine_size_raises_naming_the_job() -> None:
    jobs = _jobs()
    p = make_placement("first-fit")
    usage = usage_for_jobs(jobs)

    class Engine:
        machine_procs = 4
        procs = [8]
        jobs = type(
            "J", (), {"user_id": np.zeros(1), "job_id": np.array([77]), "submit_s": np.zeros(1)}
        )

    p.bind(Engine(), usage, 4, "given")
    with pytest.raises(PlacementError, match="job 77"):
        p.on_start(Engine(), 0, 0.0)
