"""rangeSets and the baseline on a slice of a real trace (KTH, first 4000 jobs)."""

from __future__ import annotations

import pytest

from predictor.core.runtime.evaluate import evaluate_runtime
from tests.conftest import trace_file
from traces.core.swf import read_swf

pytestmark = pytest.mark.realtrace


def test_kth_slice_rangesets_are_narrow_and_often_right(shared_traces) -> None:
    path = trace_file(shared_traces, "KTH-SP2-1996-2.1-cln.swf.gz")
    swf = read_swf(path)
    result = evaluate_runtime(
        swf.jobs.iloc[:4000], float(swf.machine_procs), ("rangeset", "baseline"), limit=300
    )
    rs, base = result["methods"]["rangeset"], result["methods"]["baseline"]
    assert rs["jobs"] == base["jobs"] == 300
    assert 0.3 < rs["success_rate"] <= base["success_rate"]  # measured 0.39
    assert rs["coverage"] < 0.5
    assert rs["load_functions"] >= 1
