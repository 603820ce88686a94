"""Loads of a whole real trace (HPC2N, 203k jobs): sane values for every job.

Speed is measured by benchmarks (``predictor.core.runtime.load`` takes ~0.06 s here), not asserted.
"""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.runtime.load import trace_loads
from tests.conftest import trace_file
from traces.core.swf import read_swf

pytestmark = pytest.mark.realtrace


def test_hpc2n_loads_are_defined_for_every_job(shared_traces) -> None:
    path = trace_file(shared_traces, "HPC2N-2002-2.2-cln.swf.gz")
    swf = read_swf(path)
    pred, act, _ = trace_loads(swf.jobs, float(swf.machine_procs))
    assert pred.size == act.size == len(swf.jobs) == 202871
    assert np.isfinite(pred).all() and np.isfinite(act).all()
    assert 0.3 < float(np.median(pred)) < 1.0  # HPC2N runs busy
    assert float(act.min()) >= 0.0 and float(pred.max()) <= 1.0 + 1e-9
