"""A trace at a glance: jobs over time, load, wait distribution, job-size mix.

Plain numpy over the SWF columns (``submit_time``, ``wait_time``, ``run_time``,
``allocated_procs``/``requested_procs``); one vectorised pass per figure, so the
dashboard of a 200k-job log is computed in well under a second.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

DAY_S = 86400.0
MAX_BINS = 200  # time bins drawn at most: the finest of BIN_CHOICES_S that keeps to it
BIN_CHOICES_S = (3600.0, 6 * 3600.0, DAY_S, 7 * DAY_S, 30 * DAY_S)
WAIT_EDGES_S = np.array([60.0, 600.0, 3600.0, 6 * 3600.0, DAY_S])
WAIT_LABELS = ("< 1 min", "1–10 min", "10 min–1 h", "1–6 h", "6 h–1 d", "≥ 1 d")
SIZE_EDGES = np.array([1, 4, 16, 64, 256])
SIZE_LABELS = ("1", "2–4", "5–16", "17–64", "65–256", "> 256")


def dashboard(jobs: pd.DataFrame, machine_procs: int | None) -> dict[str, Any]:
    """All four figures of a trace (JSON-ready), with the time bin used."""
    submit = jobs["submit_time"].to_numpy(dtype=float)
    if submit.size == 0:
        return {"jobs": 0}
    procs = job_procs(jobs)
    run = np.maximum(jobs["run_time"].to_numpy(dtype=float), 0.0)
    wait = jobs["wait_time"].to_numpy(dtype=float)
    t0 = float(submit.min())
    bin_s = time_bin_s(float(submit.max()) - t0)
    edges = np.arange(t0, float(submit.max()) + bin_s, bin_s)
    if edges.size < 2:
        edges = np.array([t0, t0 + bin_s])
    return {
        "jobs": int(submit.size),
        "bin_s": bin_s,
        "bin_days": (edges[:-1] - t0) / DAY_S,
        "jobs_per_bin": np.histogram(submit, edges)[0],
        "load": offered_load(submit, run, procs, edges, machine_procs),
        "wait": wait_distribution(wait),
        "sizes": size_mix(procs, run),
    }


def job_procs(jobs: pd.DataFrame) -> np.ndarray:
    """Allocated processors, the request where the allocation is missing (-1)."""
    alloc = jobs["allocated_procs"].to_numpy(dtype=float)
    req = jobs["requested_procs"].to_numpy(dtype=float)
    return np.where(alloc > 0, alloc, np.maximum(req, 1.0))


def time_bin_s(span_s: float) -> float:
    """The finest of 1 h, 6 h, 1 d, 7 d, 30 d giving at most ``MAX_BINS`` bins over the span
    (beyond that, whole multiples of 30 days)."""
    for bin_s in BIN_CHOICES_S:
        if span_s / bin_s <= MAX_BINS:
            return bin_s
    return 30 * DAY_S * float(np.ceil(span_s / (30 * DAY_S) / MAX_BINS))


def offered_load(
    submit: np.ndarray, run: np.ndarray, procs: np.ndarray, edges: np.ndarray, machine: int | None
) -> np.ndarray:
    """Offered load per bin: ``sum(procs x run)`` of the jobs submitted in it over
    ``machine x bin``; 1.0 means the work of that bin would fill the machine."""
    work = np.histogram(submit, edges, weights=procs * run)[0]
    capacity = float(machine or procs.max()) * float(edges[1] - edges[0])
    return work / capacity


def wait_distribution(wait: np.ndarray) -> dict[str, Any]:
    """Share of jobs with a known wait in each class (``WAIT_LABELS``)."""
    known = wait[wait >= 0]
    counts = np.bincount(np.searchsorted(WAIT_EDGES_S, known, side="right"), minlength=6)
    return {"labels": WAIT_LABELS, "jobs": counts, "known": int(known.size)}


def size_mix(procs: np.ndarray, run: np.ndarray) -> dict[str, Any]:
    """Jobs and CPU-hours per size class (``SIZE_LABELS``), with their shares of the totals."""
    cls = np.searchsorted(SIZE_EDGES, procs, side="left")
    jobs = np.bincount(cls, minlength=6)
    cpu_h = np.bincount(cls, weights=procs * run / 3600.0, minlength=6)
    return {
        "labels": SIZE_LABELS,
        "jobs": jobs,
        "cpu_hours": cpu_h,
        "job_share": jobs / max(int(jobs.sum()), 1),
        "cpu_hour_share": cpu_h / cpu_h.sum() if cpu_h.sum() > 0 else cpu_h,
    }
