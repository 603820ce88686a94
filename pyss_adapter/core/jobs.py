"""Turn an SWF jobs table into the arrays the simulator replays (spec: "Reading a job").

Two modes:

``pyss``
    PySS's ``_job_input_to_job`` exactly, traps included: processors =
    ``max(min(allocated, N), 1)`` (field 8 ignored); a record with run time <= 0,
    allocated processors <= 0 or submit time < 0 becomes a 1-second job with a
    1-second estimate, ``max(1, allocated)`` processors (not capped) and submit
    ``max(submit, 1)``; otherwise estimate = ``int(max(requested, run, 1))`` and
    runtime = ``int(max(min(requested, run), 1))``, so a missing (-1) or 0
    requested time makes the job run for 1 second. Nothing is dropped.
``default``
    Fixes the traps and says so in :attr:`SimJobs.notes`: processors from field 5,
    else field 8, capped at N; runtime = run time (a job may overrun its
    estimate); estimate = requested time, else the run time; records without a
    submit time, run time or processor count are dropped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

MODES = ("default", "pyss")


@dataclass(frozen=True)
class SimJobs:
    """Jobs ready to replay, sorted by submit time (stable).

    Attributes
    ----------
    job_id, user_id : ndarray of int64, shape (n,)
    submit_s, runtime_s, estimate_s : ndarray of float64, shape (n,), seconds.
        ``estimate_s`` is the user's requested time after conversion.
    n_procs : ndarray of int64, shape (n,)
    machine_procs : int
    mode : str
    notes : dict of str to int, how many records each conversion rule touched.
    """

    job_id: np.ndarray
    submit_s: np.ndarray
    runtime_s: np.ndarray
    estimate_s: np.ndarray
    n_procs: np.ndarray
    user_id: np.ndarray
    machine_procs: int
    mode: str
    notes: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.job_id)


def sim_jobs(jobs: pd.DataFrame, machine_procs: int, mode: str = "default") -> SimJobs:
    """Convert ``read_swf(...).jobs`` for a machine of ``machine_procs`` processors."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if int(machine_procs) < 1:
        raise ValueError(f"machine_procs must be >= 1, got {machine_procs}")
    convert = _pyss_arrays if mode == "pyss" else _default_arrays
    cols, notes = convert(jobs, int(machine_procs))
    order = np.argsort(cols["submit_s"], kind="stable")
    return SimJobs(
        **{k: np.ascontiguousarray(v[order]) for k, v in cols.items()},
        machine_procs=int(machine_procs),
        mode=mode,
        notes=notes,
    )


def _column(jobs: pd.DataFrame, name: str) -> np.ndarray:
    return jobs[name].to_numpy(dtype=np.float64)


def _pyss_arrays(jobs: pd.DataFrame, n: int) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    submit = np.trunc(_column(jobs, "submit_time"))
    run = _column(jobs, "run_time")  # PySS parses field 4 with float()
    alloc = np.trunc(_column(jobs, "allocated_procs"))
    req = np.trunc(_column(jobs, "requested_time"))
    trap = (run <= 0) | (alloc <= 0) | (submit < 0)
    estimate = np.where(trap, 1.0, np.trunc(np.maximum.reduce([req, run, np.ones_like(run)])))
    runtime = np.where(trap, 1.0, np.trunc(np.maximum(np.minimum(req, run), 1.0)))
    procs = np.where(trap, np.maximum(alloc, 1), np.maximum(np.minimum(alloc, n), 1))
    notes = {
        "pyss_one_second_records": int(trap.sum()),
        "pyss_missing_request_runs_1s": int((~trap & (req <= 0)).sum()),
        "pyss_overrun_cut_to_request": int((~trap & (req > 0) & (req < run)).sum()),
        "pyss_procs_capped": int((~trap & (alloc > n)).sum()),
    }
    cols = {
        "job_id": jobs["job_id"].to_numpy(dtype=np.int64),
        "submit_s": np.where(trap, np.maximum(submit, 1.0), submit),
        "runtime_s": runtime,
        "estimate_s": estimate,
        "n_procs": procs.astype(np.int64),
        "user_id": jobs["user_id"].to_numpy(dtype=np.int64),
    }
    return cols, notes


def _default_arrays(jobs: pd.DataFrame, n: int) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    submit = _column(jobs, "submit_time")
    run = _column(jobs, "run_time")
    alloc = jobs["allocated_procs"].to_numpy(dtype=np.int64)
    procs = np.where(alloc > 0, alloc, jobs["requested_procs"].to_numpy(dtype=np.int64))
    req = _column(jobs, "requested_time")
    keep = (submit >= 0) & (run >= 0) & (procs > 0)
    estimate = np.maximum(np.where(req > 0, req, run), 1.0)
    notes = {
        "dropped_missing_submit": int((submit < 0).sum()),
        "dropped_missing_runtime": int(((submit >= 0) & (run < 0)).sum()),
        "dropped_missing_procs": int(((submit >= 0) & (run >= 0) & (procs <= 0)).sum()),
        "procs_from_requested": int((keep & (alloc <= 0)).sum()),
        "procs_capped_at_machine": int((keep & (procs > n)).sum()),
        "estimate_from_runtime": int((keep & (req <= 0)).sum()),
        "runtime_exceeds_estimate": int((keep & (run > estimate)).sum()),
    }
    cols = {
        "job_id": jobs["job_id"].to_numpy(dtype=np.int64)[keep],
        "submit_s": submit[keep],
        "runtime_s": run[keep],
        "estimate_s": estimate[keep],
        "n_procs": np.minimum(procs[keep], n),
        "user_id": jobs["user_id"].to_numpy(dtype=np.int64)[keep],
    }
    return cols, notes


def sim_jobs_from_arrays(
    submit_s: np.ndarray,
    runtime_s: np.ndarray,
    estimate_s: np.ndarray,
    n_procs: np.ndarray,
    machine_procs: int,
    job_id: np.ndarray | None = None,
    user_id: np.ndarray | None = None,
) -> SimJobs:
    """Build :class:`SimJobs` from ready arrays (tests, start-time estimates)."""
    size = len(submit_s)
    cols: dict[str, Any] = {
        "job_id": np.arange(1, size + 1) if job_id is None else np.asarray(job_id),
        "submit_s": np.asarray(submit_s, dtype=np.float64),
        "runtime_s": np.asarray(runtime_s, dtype=np.float64),
        "estimate_s": np.asarray(estimate_s, dtype=np.float64),
        "n_procs": np.asarray(n_procs, dtype=np.int64),
        "user_id": np.zeros(size, np.int64) if user_id is None else np.asarray(user_id),
    }
    order = np.argsort(cols["submit_s"], kind="stable")
    return SimJobs(
        **{k: v[order] for k, v in cols.items()},
        machine_procs=int(machine_procs),
        mode="arrays",
    )
