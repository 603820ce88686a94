"""LVRB's memory score (spec placement.md §2.3): on with ``node_mem_kb`` when field 7 is
given for at least half of the jobs; the node score is then round(min(cpu, mem))."""

from __future__ import annotations

import numpy as np

from pyss_adapter.core.jobs import sim_jobs_from_arrays
from pyss_adapter.core.placement import make_placement
from pyss_adapter.core.placement.usage import usage_for_jobs
from pyss_adapter.core.replay import replay_jobs


def _run(mem_kb: np.ndarray, **opt):
    # Two nodes of 4 cores. Job 0 (t = 0): 2 cores at u = 0.1, 1500 KB per core -> node 0
    # (a tie, lowest id). Job 1 (t = 1200): 2 cores at u = 0.5 -> node 1 (CPU 75 against
    # 72.5). Job 2 (t = 2400): 2 cores at u = 0.5, 100 KB per core, after 15 quiet minutes:
    #   node 0: CPU mu = (200 + 2000)/4000 = 0.55 -> 72.5; memory (3000 + 200)/4000 = 0.8 -> 60
    #   node 1: CPU mu = (1000 + 2000)/4000 = 0.75 -> 62.5 (63); memory (200 + 200)/4000 -> 95
    # CPU only: node 0 (73 > 63). With memory: min -> 60 against 63: node 1.
    submit = np.array([0.0, 1200.0, 2400.0])
    runtime = np.full(3, 10_000.0)
    jobs = sim_jobs_from_arrays(submit, runtime, runtime, np.array([2, 2, 2]), 8)
    jobs = jobs.__class__(**{**jobs.__dict__, "cpu_frac": np.array([0.1, 0.5, 0.5]),
                             "mem_kb": mem_kb})  # fmt: skip
    result = replay_jobs(jobs, placement=make_placement("lvrb", **opt),
                         usage=usage_for_jobs(jobs), cores_per_node=(4, "given"))  # fmt: skip
    log = result.placement_log
    return dict(zip(log["job"].tolist(), log["node"].tolist(), strict=True)), result.placement


def test_memory_moves_the_job_off_the_node_whose_memory_is_nearly_full() -> None:
    mem = np.array([1500.0, 100.0, 100.0])
    cpu_only, block = _run(mem)
    assert cpu_only == {0: 0, 1: 1, 2: 0}
    assert block["options"]["memory"] == "off"
    with_mem, block = _run(mem, node_mem_kb=4000)
    assert with_mem == {0: 0, 1: 1, 2: 1}
    assert block["options"]["memory"] == "on"


def test_memory_stays_off_and_says_why_when_field_7_is_mostly_missing() -> None:
    placed, block = _run(np.array([1500.0, np.nan, np.nan]), node_mem_kb=4000)
    assert placed == {0: 0, 1: 1, 2: 0}
    assert block["options"]["memory"] == "off: field 7 given for 33% of jobs (< 50%)"
