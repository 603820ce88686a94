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

Every figure reads the jobs as actually run (``ReplayResult.n_procs``,
``runtime_s``, ``requested_s``, ``release_s``): a submit policy's resized or held
jobs count as they ran. Waits are from the original submission (a hold is waiting
too); :func:`policy_view` adds the molded and held shares and the wait in the queue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from pyss_adapter.core.engine import ReplayResult

BSLD_BOUND_S = 10.0
UTIL_BIN_S = 1800.0
CPU_HOUR_EDGES = (1.0, 10.0, 100.0, 1000.0)
WAIT_EDGES_S = (1.0, 600.0, 3600.0, 4 * 3600.0, 12 * 3600.0, 86400.0)
WAIT_LABELS = ("0", "< 10 min", "10 min - 1 h", "1-4 h", "4-12 h", "12-24 h", ">= 1 d")


def job_metrics(result: ReplayResult) -> dict[str, np.ndarray]:
    """Per-job wait, response, slowdown and bounded slowdown (shape (n,) each)."""
    run = result.runtime_s
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
    area = float((result.runtime_s * result.n_procs).sum())
    return area / (jobs.machine_procs * span) if span > 0 else 0.0


def utilisation_series(result: ReplayResult, bin_s: float = UTIL_BIN_S) -> dict[str, Any]:
    """Utilisation per ``bin_s`` bin from the first submission: mean busy fraction in each bin.

    Uses the integral of busy processors, ``F(t) = sum_j p_j * clip(t - start_j, 0, run_j)``,
    evaluated at the bin edges with sorted cumulative sums.
    """
    jobs = result.jobs
    if len(jobs) == 0:
        return {"bin_s": bin_s, "t0_s": 0.0, "utilisation": []}
    t0 = float(jobs.submit_s.min())
    edges = np.arange(t0, float(result.end_s.max()) + bin_s, bin_s)
    area = busy_integral(result.start_s, result.end_s, result.n_procs, edges)
    util = np.diff(area) / (jobs.machine_procs * bin_s)
    return {"bin_s": bin_s, "t0_s": t0, "utilisation": np.round(util, 6).tolist()}


def busy_integral(
    start: np.ndarray, end: np.ndarray, procs: np.ndarray, at: np.ndarray
) -> np.ndarray:
    """``F(t) = sum_j p_j clip(t - start_j, 0, end_j - start_j)`` at each ``at``: the
    processor-seconds used by ``t`` (the busy-CPU curve's integral), with sorted cumulative
    sums of ``p`` and ``p * time`` (shape of ``at``)."""

    def ramp(times: np.ndarray) -> np.ndarray:
        order = np.argsort(times, kind="stable")
        t, p = times[order], np.asarray(procs, np.float64)[order]
        cum_p = np.concatenate([[0.0], np.cumsum(p)])
        cum_pt = np.concatenate([[0.0], np.cumsum(p * t)])
        k = np.searchsorted(t, at, side="right")
        return at * cum_p[k] - cum_pt[k]

    return ramp(np.asarray(start, np.float64)) - ramp(np.asarray(end, np.float64))


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
    n = len(result.jobs)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    finish = result.finish_order
    order = finish[np.argsort(result.end_s[finish], kind="stable")]
    tiny = (result.requested_s[order] == 1) & (result.n_procs[order] == 1)
    counter = np.arange(1, n + 1)
    size = n - np.cumsum(tiny)
    early = (size >= 100) & (counter <= size // 100)
    candidate = ~tiny & ~early
    late = candidate & (result.end_s[order] > result.release_s.max())
    stop = int(np.argmax(late)) if late.any() else n
    return order[:stop][candidate[:stop]]


def pyss_view(result: ReplayResult) -> dict:
    """PySS's statistics (tiny and first-1% jobs skipped, cut at the last submission)."""
    chosen = pyss_selection(result)
    m = job_metrics(result)
    est = result.requested_s[chosen]
    return {
        "view": "pyss",
        "n_jobs": int(len(chosen)),
        "mean_wait_min": cast(float, _mean(m["wait_s"][chosen])) / 60.0 if len(chosen) else None,
        "mean_response_min": cast(float, _mean(m["response_s"][chosen])) / 60.0
        if len(chosen)
        else None,
        "mean_slowdown": _mean(m["slowdown"][chosen]),
        "mean_bounded_slowdown": _mean(m["bsld"][chosen]),
        "mean_estimated_slowdown": _mean(m["response_s"][chosen] / est),
    }


def policy_view(result: ReplayResult) -> dict:
    """What a submit policy changed: molded and held shares, mean hold, wait in the queue.

    ``mean_wait_s`` counts from the original submission (the user's wait, hold
    included), ``mean_queue_wait_s`` from the release (the scheduler's part).
    """
    n = len(result.jobs)
    molded = result.n_procs != result.original_procs
    delay = result.delay_s
    return {
        "view": "policy",
        "n_jobs": n,
        "molded_share": float(molded.mean()) if n else 0.0,
        "delayed_share": float((delay > 0).mean()) if n else 0.0,
        "mean_delay_s": _mean(delay),
        "mean_delay_of_delayed_s": _mean(delay[delay > 0]),
        "mean_wait_s": _mean(result.wait_s),
        "mean_queue_wait_s": _mean(result.queue_wait_s),
    }


def cpu_hour_class_labels() -> list[str]:
    edges = CPU_HOUR_EDGES
    labels = [f"<{edges[0]:g}"]
    labels += [f"{lo:g}-{hi:g}" for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
    return [*labels, f">={edges[-1]:g}"]


def cpu_hour_class(procs: np.ndarray, runtime_s: np.ndarray) -> np.ndarray:
    """Class index of each job by ``procs x runtime / 3600`` CPU-hours (edges 1, 10, 100, 1000)."""
    cpu_h = np.asarray(procs, float) * np.maximum(np.asarray(runtime_s, float), 0.0) / 3600.0
    return np.searchsorted(np.asarray(CPU_HOUR_EDGES), cpu_h, side="right")


def distributions(result: ReplayResult) -> dict:
    """Jobs per wait class, and mean response per CPU-hours class of the request as run.

    The seed ("End-to-End Predictions-Based Resource Management Framework for Supercomputer
    Jobs", Section V-C, Figures 7 and 9) reports response by CPU-hours class; a wait
    histogram shows the tail that a mean hides. Returns ``{labels, values}`` blocks.
    """
    m = job_metrics(result)
    wait_class = np.searchsorted(np.asarray(WAIT_EDGES_S), m["wait_s"], side="right")
    counts = np.bincount(wait_class, minlength=len(WAIT_LABELS))
    classes = cpu_hour_class(result.n_procs, result.runtime_s)
    labels = cpu_hour_class_labels()
    sums = np.bincount(classes, weights=m["response_s"], minlength=len(labels))
    n = np.bincount(classes, minlength=len(labels))
    means = [float(s / k) if k else None for s, k in zip(sums, n, strict=True)]
    return {
        "wait_histogram": {"labels": list(WAIT_LABELS), "values": counts.tolist()},
        "response_by_cpu_hours": {"labels": labels, "values": means},
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
    if result.decisions:
        out["policy"] = policy_view(result)
    out["utilisation_series"] = utilisation_series(result, bin_s)
    out["run"] = {
        "scheduler": result.scheduler,
        "estimates": result.estimates,
        **{k: v for k, v in result.meta.items()},
    }
    return out
