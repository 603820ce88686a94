"""Waits of tentative arrivals from the simulated queue: a start-time projection.

What ``squeue --start`` tells a user, and the project's ``sim`` wait method, computed from
the replay's own state only: the running jobs (expected to end at start + estimate, as the
scheduler expects; a job past its estimate at its requested end, never before now + 1 s)
and the queued jobs (each assumed to run for its estimate). The queue is planned in arrival
order into a free-processor profile, each job at the earliest time its processors are free
for its whole estimate (conservative backfilling: nobody planned earlier is delayed). A
candidate arrives last, so its predicted start is its earliest fit in that plan.

The profile is two arrays: breakpoints ``T`` (sorted, ``T[0]`` = the projection's start)
and ``F[i]``, the free processors on ``[T[i], T[i+1])`` (the last segment runs forever).
Each placement is a few numpy passes over the profile, no Python loop over it.
"""

from __future__ import annotations

import numpy as np


def profile(
    t0_s: float, machine_procs: int, ends_s: np.ndarray, procs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The free-processor profile from ``t0_s`` with running jobs ending at ``ends_s``."""
    ends = np.maximum(np.asarray(ends_s, dtype=float), t0_s)
    p = np.asarray(procs, dtype=np.int64)
    order = np.argsort(ends, kind="stable")
    times, freed = np.unique(ends[order], return_inverse=True)
    gain = np.bincount(freed, weights=p[order], minlength=times.size).astype(np.int64)
    start_free = int(machine_procs - p.sum())
    if times.size and times[0] == t0_s:
        start_free += int(gain[0])
        times, gain = times[1:], gain[1:]
    t = np.concatenate([[float(t0_s)], times])
    f = start_free + np.concatenate([[0], np.cumsum(gain)])
    return t, f.astype(np.int64)


def earliest_fit(t: np.ndarray, f: np.ndarray, procs: int, duration_s: float) -> float:
    """The first breakpoint from which ``procs`` stay free for ``duration_s``."""
    bad = np.concatenate([[0], np.cumsum(f < procs)])
    last = np.searchsorted(t, t + max(duration_s, 0.0), side="left")  # segments [i, last)
    last = np.maximum(last, np.arange(t.size) + 1)
    fits = (f >= procs) & (bad[last] - bad[np.arange(t.size)] == 0)
    hit = np.flatnonzero(fits)
    return float(t[hit[0]]) if hit.size else float("inf")


def occupy(
    t: np.ndarray, f: np.ndarray, start_s: float, duration_s: float, procs: int
) -> tuple[np.ndarray, np.ndarray]:
    """The profile with ``procs`` taken on ``[start, start + duration)``."""
    end = start_s + max(duration_s, 0.0)
    for point in (start_s, end):
        k = np.searchsorted(t, point, side="left")
        if k == t.size or t[k] != point:
            t = np.insert(t, k, point)
            f = np.insert(f, k, f[k - 1])
    lo = np.searchsorted(t, start_s, side="left")
    hi = np.searchsorted(t, end, side="left")
    f = f.copy()
    f[lo:hi] -= procs
    return t, f


def projected_waits(
    t0_s: float,
    machine_procs: int,
    running_end_s: np.ndarray,
    running_procs: np.ndarray,
    queue_procs: np.ndarray,
    queue_estimate_s: np.ndarray,
    cand_procs: np.ndarray,
    cand_estimate_s: np.ndarray,
) -> np.ndarray:
    """Predicted wait (from ``t0_s``) of each candidate arriving behind the queue; (K,).

    Parameters
    ----------
    t0_s : when the candidates arrive.
    running_end_s, running_procs : (R,) expected ends and sizes of the running jobs.
    queue_procs, queue_estimate_s : (Q,) the queued jobs in arrival order.
    cand_procs, cand_estimate_s : (K,) the candidates (sizes <= machine_procs).
    """
    t, f = profile(t0_s, machine_procs, running_end_s, running_procs)
    for p, e in zip(
        np.asarray(queue_procs).tolist(), np.asarray(queue_estimate_s).tolist(), strict=True
    ):
        p = min(int(p), machine_procs)
        t, f = occupy(t, f, earliest_fit(t, f, p, e), e, p)
    starts = [
        earliest_fit(t, f, min(int(p), machine_procs), float(e))
        for p, e in zip(
            np.asarray(cand_procs).tolist(), np.asarray(cand_estimate_s).tolist(), strict=True
        )
    ]
    return np.asarray(starts, dtype=float) - float(t0_s)
