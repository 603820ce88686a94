"""The demo workload: a synthetic Lublin-Feitelson trace with waits from an EASY replay.

The generator gives arrivals, sizes, runtimes and requested times but no waits
(SWF field 3 = -1). A queue-wait service needs waits to learn from, so the demo
replays the jobs with EASY backfilling on the same machine and writes the
simulated waits back, as a real scheduler's log would have them.

One clock: a demo site replays the trace at speed 1 (a trace second is a wall second), so
what its history says and what a submitted job does are on the same time scale. For a
demo that moves while someone watches, the workload is compressed *at generation*
(``time_scale``: arrivals, runtimes and requested times divided by it, then the waits
replayed): a job predicted to take 2 minutes takes about 2 minutes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pyss_adapter.core.replay import with_simulated_waits
from traces.core.swf import SwfTrace
from traces.core.swf_header import parse_header
from traces.core.synthetic import MODELS, generate_lublin, lublin_header

#: How much faster than the model's own clock the demo site's workload runs.
DEMO_TIME_SCALE = 30.0


def demo_trace(
    n_jobs: int = 5000, machine_procs: int = 128, *, seed: int = 1, time_scale: float = 1.0
) -> SwfTrace:
    """A reproducible synthetic trace whose waits come from an EASY replay; its times divided
    by ``time_scale`` (>= 1) before the replay."""
    if not time_scale >= 1.0:
        raise ValueError(f"time_scale must be >= 1, got {time_scale}")
    params = MODELS["all"]
    jobs = generate_lublin(n_jobs, machine_procs, rng=np.random.default_rng(seed), params=params)
    if time_scale != 1.0:
        jobs = compressed(jobs, time_scale)
    jobs = with_simulated_waits(jobs, machine_procs)
    lines = lublin_header(n_jobs, machine_procs, seed=seed, params=params)
    if time_scale != 1.0:
        lines.append(f"; Note: arrivals, run and requested times divided by {time_scale:g}")
    lines.append("; Note: wait times from an EASY-backfilling replay with requested times")
    return SwfTrace(header=parse_header(lines), jobs=jobs, name="demo")


def compressed(jobs: pd.DataFrame, time_scale: float) -> pd.DataFrame:
    """Arrivals, runtimes and requested times divided by ``time_scale`` (whole seconds, at
    least 1 for a duration; a request never below its runtime)."""
    out = jobs.copy()
    out["submit_time"] = np.floor(out["submit_time"] / time_scale).astype(out["submit_time"].dtype)
    run = np.maximum(np.round(out["run_time"].to_numpy(float) / time_scale), 1.0)
    req = out["requested_time"].to_numpy(float)
    req = np.where(req > 0, np.maximum(np.ceil(req / time_scale), run), req)
    out["run_time"] = run.astype(out["run_time"].dtype)
    out["requested_time"] = req.astype(out["requested_time"].dtype)
    return out
