"""The demo workload: a synthetic Lublin-Feitelson trace with waits from an EASY replay.

The generator gives arrivals, sizes, runtimes and requested times but no waits
(SWF field 3 = -1). A queue-wait service needs waits to learn from, so the demo
replays the jobs with EASY backfilling on the same machine and writes the
simulated waits back, as a real scheduler's log would have them.
"""

from __future__ import annotations

import numpy as np

from pyss_adapter.core.replay import with_simulated_waits
from traces.core.swf import SwfTrace
from traces.core.swf_header import parse_header
from traces.core.synthetic import MODELS, generate_lublin, lublin_header


def demo_trace(n_jobs: int = 5000, machine_procs: int = 128, *, seed: int = 1) -> SwfTrace:
    """A reproducible synthetic trace whose waits come from an EASY replay."""
    params = MODELS["all"]
    jobs = generate_lublin(n_jobs, machine_procs, rng=np.random.default_rng(seed), params=params)
    jobs = with_simulated_waits(jobs, machine_procs)
    lines = lublin_header(n_jobs, machine_procs, seed=seed, params=params)
    lines.append("; Note: wait times from an EASY-backfilling replay with requested times")
    return SwfTrace(header=parse_header(lines), jobs=jobs, name="demo")
