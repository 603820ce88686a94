"""The replay's predictor is the live service's bundle fitted on the simulated past only
(``jobmolding.core.replay_bundle``): the log's own waits are never read, nothing that
arrives later changes a decision, and the fit follows the simulated history in blocks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobmolding.core.evaluate import evaluate, prepare
from jobmolding.core.policy import MoldingParams
from jobmolding.core.replay_bundle import ReplayBundle
from traces.core.swf import SWF_FIELDS

LIMIT_S = 6000.0


def small_log(n: int = 90, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = pd.DataFrame(-1, index=range(n), columns=list(SWF_FIELDS), dtype=np.int64)
    run = rng.integers(50, 2000, n)
    procs = rng.choice([1, 2, 4, 8, 16], n)
    out["job_id"] = np.arange(1, n + 1)
    out["submit_time"] = np.cumsum(rng.integers(10, 200, n))
    out["wait_time"] = 0
    out["run_time"] = run
    out["allocated_procs"] = out["requested_procs"] = procs
    out["requested_time"] = np.minimum(run * rng.integers(1, 4, n), LIMIT_S).astype(np.int64)
    out["user_id"] = rng.integers(1, 5, n)
    return out


def run(log, n_warmup=60):
    bundles = []

    def make(s):
        bundles.append(ReplayBundle(s.jobs.machine_procs, "sim", "rangeset"))
        return bundles[-1]

    setup = prepare(log, 16, tune_fraction=n_warmup / len(log))
    params = MoldingParams(strategy="delay", runtime_model="downey", guard=0.0)
    out = evaluate(setup, ["delay"], params, make)["delay"].outcome
    return out, bundles[0]


def test_the_logs_waits_are_never_read_and_later_arrivals_change_no_decision() -> None:
    log = small_log(240, seed=5)
    base, bundle = run(log)
    assert bundle.fits_ >= 2  # refitted as the simulated history grew
    assert (base.procs != base.original_procs).any()  # something was decided
    tripled, _ = run(log.assign(wait_time=log["wait_time"] * 3 + 77))
    np.testing.assert_array_equal(base.procs, tripled.procs)
    np.testing.assert_array_equal(base.release_s, tripled.release_s)
    cut, _ = run(log.iloc[:180].reset_index(drop=True))
    # decided before job 180 arrives (a held follower is decided at its release, when
    # later arrivals are known to both the replay and a live site)
    before = base.release_s[:180] < float(log["submit_time"].iloc[180])
    assert before.sum() > 150
    np.testing.assert_array_equal(base.procs[:180][before], cut.procs[before])
    np.testing.assert_array_equal(base.release_s[:180][before], cut.release_s[before])


def test_the_bundle_is_fitted_on_finished_simulated_jobs_only() -> None:
    log = small_log(240, seed=5)
    _, bundle = run(log)
    fitted = bundle.bundle_.jobs
    assert (fitted["wait_time"] >= 0).all() and (fitted["run_time"] >= 0).all()
    assert len(fitted) == bundle.fitted_rows_ < len(log)
    assert fitted["job_id"].tolist() == list(range(1, len(fitted) + 1))
