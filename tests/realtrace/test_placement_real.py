"""Placement on the shared PWA traces (spec placement.md §3.2, I-3): an observer placement
leaves every start and end as without it, in both modes; KTH (no field 6) only with a fill.

The first 800 jobs of each log keep the tier quick; ``manage.py replay --placement``
runs whole logs (docs/results.md, "Placement").
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from pyss_adapter.core.jobs import sim_jobs
from pyss_adapter.core.placement import make_placement
from pyss_adapter.core.placement.usage import UsageError, usage_for_jobs
from pyss_adapter.core.replay import replay_jobs
from traces.core.swf import read_swf

pytestmark = pytest.mark.realtrace

TRACES = {
    "CTC-SP2-1996-3.1-cln.swf.gz": (338, None),
    "SDSC-SP2-1998-4.2-cln.swf.gz": (128, None),
    "HPC2N-2002-2.2-cln.swf.gz": (240, None),
    "KTH-SP2-1996-2.1-cln.swf.gz": (100, 1.0),
}
OBSERVERS = [
    ("least-allocated", {}),
    ("tlp", {}),
    ("lvrb", {}),
    ("gpa", {}),
    ("pool-slots", {}),
    ("cash", {"credits": "off"}),
]


@cache
def _frame(folder: Path, name: str):
    return read_swf(folder / name).jobs.iloc[:800]


def _jobs(folder: Path, name: str, mode: str):
    return sim_jobs(_frame(folder, name), TRACES[name][0], mode)


@pytest.mark.parametrize("mode", ["default", "pyss"])
@pytest.mark.parametrize("name", list(TRACES))
def test_observer_placements_keep_the_schedule(shared_traces: Path, name: str, mode: str) -> None:
    if not (shared_traces / name).is_file():
        pytest.skip(f"{name} is not in {shared_traces}")
    jobs = _jobs(shared_traces, name, mode)
    plain = replay_jobs(jobs)
    usage = usage_for_jobs(jobs, model="beta", fill=TRACES[name][1])
    usage.memo = {}  # one schedule: the beta draws are made once for the six observers
    for policy, options in OBSERVERS:
        result = replay_jobs(
            jobs,
            placement=make_placement(policy, **options),
            usage=usage,
            cores_per_node=(8, "virtual"),
        )
        assert np.array_equal(result.start_s, plain.start_s), policy
        assert np.array_equal(result.end_s, plain.end_s), policy


def test_kth_without_field_6_needs_a_fill(shared_traces: Path) -> None:
    name = "KTH-SP2-1996-2.1-cln.swf.gz"
    if not (shared_traces / name).is_file():
        pytest.skip(f"{name} is not in {shared_traces}")
    with pytest.raises(UsageError, match="field 6"):
        usage_for_jobs(_jobs(shared_traces, name, "default"))
