"""What a molding replay reports per strategy (seed "End-to-End Predictions-Based Resource
Management Framework for Supercomputer Jobs", Section V-C: Tables VIII and IX, Figures 6-10).

Every figure is over the evaluated jobs (those after the warm-up part) and reads the jobs as
they actually ran: the size, runtime and release a policy chose, not the input request.
Times count from the user's arrival, so a hold is part of the wait and of the response:
``wait = start - arrival``, ``response = wait + runtime``,
``bounded slowdown = max(1, response / max(runtime, 10 s))``. Utilisation is the busy
processor-time of *all* jobs inside ``[first evaluated arrival, last evaluated end]`` over
``machine_procs`` times that span (``pyss_adapter.core.stats.busy_integral``, the replay's
busy-CPU integral). CPU-hours classes use the job's *original* request (log
size times log runtime), so a job sits in the same class under every strategy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyss_adapter.core.stats import busy_integral, cpu_hour_class, cpu_hour_class_labels

BSLD_BOUND_S = 10.0
LOAD_BIN_S = 1800.0


@dataclass(frozen=True)
class RunOutcome:
    """Per-job arrays of one strategy's replay, aligned (row k = job k, by arrival).

    arrival_s : the user's submission. release_s : when the job entered the batch queue.
    start_s, runtime_s, procs : as run. original_procs, original_runtime_s : the log's.
    evaluated : bool mask of the jobs after the warm-up part.
    """

    arrival_s: np.ndarray
    release_s: np.ndarray
    start_s: np.ndarray
    runtime_s: np.ndarray
    procs: np.ndarray
    original_procs: np.ndarray
    original_runtime_s: np.ndarray
    evaluated: np.ndarray
    machine_procs: int


def utilisation(o: RunOutcome) -> float:
    ev = o.evaluated
    if not ev.any():
        return 0.0
    t0 = float(o.arrival_s[ev].min())
    t1 = float((o.start_s + o.runtime_s)[ev].max())
    if t1 <= t0:
        return 0.0
    area = busy_integral(o.start_s, o.start_s + o.runtime_s, o.procs, np.array([t0, t1]))
    return float((area[1] - area[0]) / (o.machine_procs * (t1 - t0)))


def load_series(o: RunOutcome, t0_s: float, t1_s: float, bin_s: float = LOAD_BIN_S) -> np.ndarray:
    """Mean busy fraction of the machine in each ``bin_s`` bin of ``[t0, t1)``."""
    edges = np.arange(t0_s, t1_s + bin_s, bin_s)
    area = busy_integral(o.start_s, o.start_s + o.runtime_s, o.procs, edges)
    return np.diff(area) / (o.machine_procs * bin_s)


def _figures(o: RunOutcome, mask: np.ndarray) -> dict[str, Any]:
    n = int(mask.sum())
    if n == 0:
        return {"jobs": 0}
    wait = (o.start_s - o.arrival_s)[mask]
    run = o.runtime_s[mask]
    response = wait + run
    delay = (o.release_s - o.arrival_s)[mask]
    return {
        "jobs": n,
        "mean_wait_s": float(wait.mean()),
        "mean_run_s": float(run.mean()),
        "mean_response_s": float(response.mean()),
        "median_response_s": float(np.median(response)),
        "mean_bounded_slowdown": float(
            np.maximum(1.0, response / np.maximum(run, BSLD_BOUND_S)).mean()
        ),
        "molded_share": float((o.procs[mask] != o.original_procs[mask]).mean()),
        "delayed_share": float((delay > 0).mean()),
        "mean_delay_s": float(delay.mean()),
        **_work_ratios(o, mask),
    }


def _work_ratios(o: RunOutcome, mask: np.ndarray) -> dict[str, float | None]:
    """CPU work as run over the log's work (size x runtime), for all and for molded jobs: how
    much a runtime model shrank or grew the work (1.0 = unchanged)."""
    as_run = o.procs.astype(float) * o.runtime_s
    original = o.original_procs.astype(float) * o.original_runtime_s
    molded = mask & (o.procs != o.original_procs)

    def ratio(m: np.ndarray) -> float | None:
        base = float(original[m].sum())
        return float(as_run[m].sum() / base) if m.any() and base > 0 else None

    return {"work_ratio": ratio(mask), "molded_work_ratio": ratio(molded)}


def summarise(o: RunOutcome) -> dict[str, Any]:
    """The strategy's figures (JSON keys of ``evaluate_molding``) plus ``by_cpu_hours``."""
    ev = np.asarray(o.evaluated, bool)
    out = _figures(o, ev)
    out["utilisation"] = utilisation(o)
    classes = cpu_hour_class(o.original_procs, o.original_runtime_s)
    out["by_cpu_hours"] = {
        label: _figures(o, ev & (classes == k)) for k, label in enumerate(cpu_hour_class_labels())
    }
    return out


def halves(o: RunOutcome) -> list[dict[str, float]]:
    """Mean response and mean bounded slowdown of each half of the evaluated jobs (by
    arrival): whether a gain holds over the whole part or comes from one stretch of it."""
    idx = np.flatnonzero(np.asarray(o.evaluated, bool))
    out = []
    for part in (idx[: idx.size // 2], idx[idx.size // 2 :]):
        mask = np.zeros(len(o.arrival_s), dtype=bool)
        mask[part] = True
        fig = _figures(o, mask)
        out.append({k: fig.get(k, 0.0) for k in ("mean_response_s", "mean_bounded_slowdown")})
    return out


WINDOW_S = 3.5 * 86400.0


def load_window(o: RunOutcome, width_s: float = WINDOW_S, bin_s: float = LOAD_BIN_S) -> float:
    """Start of the ``width_s`` window (on 12-hour steps inside the evaluated part) where the
    load of ``o`` swings most (largest standard deviation of its 30-minute loads), like the
    seed's Figure 10 window with its day and night; the first evaluated arrival if the part
    is shorter than the window."""
    t0 = float(o.arrival_s[o.evaluated].min())
    t1 = float(o.arrival_s[o.evaluated].max())
    if t1 - t0 <= width_s:
        return t0
    series = load_series(o, t0, t1, bin_s)
    per_window, step = int(width_s // bin_s), int(43200 // bin_s)
    starts = np.arange(0, series.size - per_window + 1, step)
    spread = [float(series[s : s + per_window].std()) for s in starts]
    return t0 + float(starts[int(np.argmax(spread))]) * bin_s


def size_histogram(procs: np.ndarray, machine_procs: int) -> tuple[list[int], list[int]]:
    """Counts of jobs per request-size bin ``[2^k, 2^(k+1))``; returns (bin lower edges, counts)."""
    top = int(np.floor(np.log2(max(machine_procs, 1)))) + 1
    edges = 2 ** np.arange(top + 1)
    counts, _ = np.histogram(np.asarray(procs), bins=edges)
    return edges[:-1].tolist(), counts.astype(int).tolist()


def plot_data(outcomes: dict[str, RunOutcome]) -> dict[str, Any]:
    """What the three plots draw, JSON-ready (stored with a run, so images are drawn later).

    ``load``: 30-minute loads of every strategy over one 3.5-day window; ``sizes``: the
    evaluated jobs' request sizes, original and as run per strategy.
    """
    if not outcomes:
        return {}
    ref = outcomes.get("baseline") or next(iter(outcomes.values()))
    t0 = load_window(ref)
    t1 = t0 + WINDOW_S
    edges, original = size_histogram(ref.original_procs[ref.evaluated], ref.machine_procs)
    return {
        "load": {
            "t0_s": t0,
            "bin_s": LOAD_BIN_S,
            "series": {
                name: np.round(load_series(o, t0, t1), 4).tolist() for name, o in outcomes.items()
            },
        },
        "sizes": {
            "edges": edges,
            "original": original,
            "as_run": {
                name: size_histogram(o.procs[o.evaluated], o.machine_procs)[1]
                for name, o in outcomes.items()
                if name != "baseline"
            },
        },
    }
