"""Statistics of a replay, gathered by observers of the result (spec: "Statistics").

Two labelled views:

``all jobs``
    Every replayed job; waits in seconds. The PySS reference figures in the spec
    are this view: mean wait rounded to the second, mean bounded slowdown to two
    decimals, utilisation to three (see docs/simulator.md).
``pyss``
    PySS's ``print_statistics``: jobs sorted by finish time (stable, from the
    termination order); tiny jobs (1 processor and estimate 1 s) skipped; the
    first 1% skipped (``int(size / 100)`` where size drops with every tiny job met);
    stop at the first job finishing after the last submission; waits in minutes.

Formulas: wait = start - submit; response = wait + runtime;
slowdown = response / runtime (undefined, and left out of the mean, for 0-second
jobs); bounded slowdown = max(1, response / max(runtime, 10)).
Utilisation = sum(procs * runtime) / (N * (last end - first submit)).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pyss_adapter.core.engine import ReplayResult

BSLD_BOUND_S = 10.0
UTIL_BIN_S = 1800.0


def job_metrics(result: ReplayResult) -> dict[str, np.ndarray]:
    """Per-job wait, response, slowdown and bounded slowdown (shape (n,) each)."""
    run = result.jobs.runtime_s
    wait = result.wait_s
    response = wait + run
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = np.where(run > 0, response / np.where(run > 0, run, 1.0), np.nan)
    bsld = np.maximum(1.0, response / np.maximum(run, BSLD_BOUND_S))
    return {"wait_s": wait, "response_s": response, "slowdown": slowdown, "bsld": bsld}


def utilisation(result: ReplayResult) -> float:
    """Processor-seconds used over those available from the first submission to the last end."""
    jobs = result.jobs
    if len(jobs) == 0:
        return 0.0
    span = float(result.end_s.max() - jobs.submit_s.min())
    area = float((jobs.runtime_s * jobs.n_procs).sum())
    return area / (jobs.machine_procs * span) if span > 0 else 0.0


def utilisation_series(result: ReplayResult, bin_s: float = UTIL_BIN_S) -> dict[str, list]:
    """Utilisation per ``bin_s`` bin from the first submission: mean busy fraction in each bin.

    Uses the integral of busy processors, ``F(t) = sum_j p_j * clip(t - start_j, 0, run_j)``,
    evaluated at the bin edges with sorted cumulative sums.
    """
    jobs = result.jobs
    if len(jobs) == 0:
        return {"bin_s": bin_s, "t0_s": 0.0, "utilisation": []}
    t0 = float(jobs.submit_s.min())
    edges = np.arange(t0, float(result.end_s.max()) + bin_s, bin_s)
    area = _busy_integral(result.start_s, jobs.n_procs, edges) - _busy_integral(
        result.end_s, jobs.n_procs, edges
    )
    util = np.diff(area) / (jobs.machine_procs * bin_s)
    return {"bin_s": bin_s, "t0_s": t0, "utilisation": np.round(util, 6).tolist()}


def _busy_integral(times: np.ndarray, procs: np.ndarray, at: np.ndarray) -> np.ndarray:
    order = np.argsort(times, kind="stable")
    t, p = times[order], procs[order].astype(np.float64)
    cum_p = np.concatenate([[0.0], np.cumsum(p)])
    cum_pt = np.concatenate([[0.0], np.cumsum(p * t)])
    k = np.searchsorted(t, at, side="right")
    return at * cum_p[k] - cum_pt[k]


def all_jobs_view(result: ReplayResult) -> dict:
    """Means over every job, waits in seconds."""
    m = job_metrics(result)
    return {
        "view": "all jobs",
        "n_jobs": len(result.jobs),
        "mean_wait_s": _mean(m["wait_s"]),
        "mean_response_s": _mean(m["response_s"]),
        "mean_slowdown": _mean(m["slowdown"]),
        "mean_bounded_slowdown": _mean(m["bsld"]),
        "max_wait_s": float(m["wait_s"].max()) if len(result.jobs) else None,
        "utilisation": utilisation(result),
    }


def pyss_selection(result: ReplayResult) -> np.ndarray:
    """Indices of the jobs PySS's ``print_statistics`` counts, in its order."""
    jobs, n = result.jobs, len(result.jobs)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    finish = result.finish_order
    order = finish[np.argsort(result.end_s[finish], kind="stable")]
    tiny = (jobs.estimate_s[order] == 1) & (jobs.n_procs[order] == 1)
    counter = np.arange(1, n + 1)
    size = n - np.cumsum(tiny)
    early = (size >= 100) & (counter <= size // 100)
    candidate = ~tiny & ~early
    late = candidate & (result.end_s[order] > jobs.submit_s.max())
    stop = int(np.argmax(late)) if late.any() else n
    return order[:stop][candidate[:stop]]


def pyss_view(result: ReplayResult) -> dict:
    """PySS's statistics (tiny and first-1% jobs skipped, cut at the last submission)."""
    chosen = pyss_selection(result)
    m = job_metrics(result)
    est = result.jobs.estimate_s[chosen]
    return {
        "view": "pyss",
        "n_jobs": int(len(chosen)),
        "mean_wait_min": _mean(m["wait_s"][chosen]) / 60.0 if len(chosen) else None,
        "mean_response_min": _mean(m["response_s"][chosen]) / 60.0 if len(chosen) else None,
        "mean_slowdown": _mean(m["slowdown"][chosen]),
        "mean_bounded_slowdown": _mean(m["bsld"][chosen]),
        "mean_estimated_slowdown": _mean(m["response_s"][chosen] / est),
    }


def _mean(values: np.ndarray) -> float | None:
    """Mean over the defined values (slowdown is undefined for 0-second jobs)."""
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else None


Observer = Callable[[ReplayResult], dict]
OBSERVERS: dict[str, Observer] = {"all_jobs": all_jobs_view, "pyss": pyss_view}


def summarise(result: ReplayResult, bin_s: float = UTIL_BIN_S) -> dict:
    """Run every observer; add the run's description and the utilisation series."""
    out = {name: observe(result) for name, observe in OBSERVERS.items()}
    out["utilisation_series"] = utilisation_series(result, bin_s)
    out["run"] = {
        "scheduler": result.scheduler,
        "estimates": result.estimates,
        **{k: v for k, v in result.meta.items()},
    }
    return out
