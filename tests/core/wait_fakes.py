"""Small synthetic traces and their contexts for the queue-wait method tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from predictor.core.state.sweep import compute_state
from predictor.core.wait.types import WaitContext
from tests.conftest import swf_frame


def make_jobs(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """A trace of ``n`` jobs, sorted by submit; waits grow with the requested processors."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(300.0, n)).round()
    procs = rng.choice([1, 2, 8, 32, 100], n)
    wait = (rng.exponential(200.0, n) * (1 + procs / 10)).round()
    run = rng.exponential(2000.0, n).round() + 1
    return swf_frame(
        submit_time=submit,
        wait_time=wait,
        run_time=run,
        allocated_procs=procs,
        requested_procs=procs,
        requested_time=run * 2,
        user_id=rng.integers(1, 6, n),
        group_id=rng.integers(1, 3, n),
        executable_id=rng.integers(1, 4, n),
        queue_id=np.ones(n, dtype=np.int64),
    )


def make_ctx(jobs: pd.DataFrame, n_tune: int | None = None, state=None) -> WaitContext:
    return WaitContext(
        jobs=jobs,
        state=compute_state(jobs) if state is None else state,
        n_tune=len(jobs) // 5 if n_tune is None else n_tune,
        machine_procs=128,
    )
