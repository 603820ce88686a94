"""System load: per interval, predicted at submission, and actual over a job's execution.

Seed ``002``, runtime section: the load during an interval I is ``T_e / T_t`` where ``T_e`` is
the CPU time used by executing jobs inside I and ``T_t = |I| x P`` (P processors). The load
predicted for a job submitted at t is the mean load of the 30-minute intervals of the week
before t.

Everything derives from one curve, the cumulative CPU time ``F(t) = integral_0^t busy(u) du``,
where ``busy(u)`` is the number of processors in use at u. ``F`` is piecewise linear between
job start/end events, so ``np.interp`` on the event times gives it exactly, for any number of
query times at once. ``F(t)`` only involves jobs that started before t, each up to t, which
is exactly what an observer knows at t: the predicted load cannot leak the future.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


def job_spans(jobs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start, end (seconds) and processors of every job.

    ``start = submit + max(wait, 0)``, ``end = start + max(run, 0)``; processors are the
    allocated ones, else the requested ones, else 0 (a job with neither uses nothing).
    """
    submit = jobs["submit_time"].to_numpy(dtype=float)
    start = submit + np.maximum(jobs["wait_time"].to_numpy(dtype=float), 0.0)
    end = start + np.maximum(jobs["run_time"].to_numpy(dtype=float), 0.0)
    alloc = jobs["allocated_procs"].to_numpy(dtype=float)
    req = jobs["requested_procs"].to_numpy(dtype=float)
    procs = np.where(alloc > 0, alloc, np.maximum(req, 0.0))
    return start, end, procs


@dataclass(frozen=True)
class UsageCurve:
    """Cumulative CPU time ``F`` and processors in use, sampled at the sorted job events.

    times : (E,) event times, non-decreasing. busy_after : (E,) processors in use just after
    each event. cum_cpu : (E,) ``F`` at each event (CPU-seconds).
    """

    times: np.ndarray
    busy_after: np.ndarray
    cum_cpu: np.ndarray

    @classmethod
    def from_spans(cls, start: np.ndarray, end: np.ndarray, procs: np.ndarray) -> UsageCurve:
        times = np.concatenate([start, end])
        delta = np.concatenate([procs, -procs])
        order = np.argsort(times, kind="stable")
        times, delta = times[order], delta[order]
        busy_after = np.cumsum(delta)
        cum = np.concatenate([[0.0], np.cumsum(busy_after[:-1] * np.diff(times))])
        return cls(times=times, busy_after=busy_after, cum_cpu=cum)

    def cpu_until(self, t: np.ndarray | float) -> np.ndarray:
        """``F(t)``: CPU-seconds used before t (exact, vectorised)."""
        if self.times.size == 0:
            return np.zeros_like(np.asarray(t, dtype=float))
        return np.interp(t, self.times, self.cum_cpu, left=0.0, right=self.cum_cpu[-1])

    def busy_at(self, t: np.ndarray | float) -> np.ndarray:
        """Processors in use just after t (jobs starting at t count)."""
        idx = np.searchsorted(self.times, t, side="right") - 1
        busy = np.where(idx >= 0, self.busy_after[np.maximum(idx, 0)], 0.0)
        return np.asarray(busy, dtype=float)

    def mean_load(self, t0: np.ndarray, t1: np.ndarray, machine_procs: float) -> np.ndarray:
        """Load over ``[t0, t1]``: ``(F(t1) - F(t0)) / ((t1 - t0) P)``; at ``t0 == t1`` the
        instantaneous load ``busy(t0) / P``."""
        t0 = np.asarray(t0, dtype=float)
        t1 = np.asarray(t1, dtype=float)
        width = t1 - t0
        used = self.cpu_until(t1) - self.cpu_until(t0)
        with np.errstate(divide="ignore", invalid="ignore"):
            load = np.where(width > 0, used / (width * machine_procs), 0.0)
        return np.where(width > 0, load, self.busy_at(t0) / machine_procs)


def usage_curve(jobs: pd.DataFrame) -> UsageCurve:
    """The :class:`UsageCurve` of a trace's jobs."""
    return UsageCurve.from_spans(*job_spans(jobs))


def interval_loads(
    curve: UsageCurve, machine_procs: float, t_begin: float, t_end: float, width_s: float = 1800.0
) -> tuple[np.ndarray, np.ndarray]:
    """Loads of the consecutive intervals ``[t_begin + i w, t_begin + (i+1) w)``.

    Returns ``(edges, loads)`` with ``edges`` of shape (B+1,) and ``loads`` (B,), where
    ``load_i = (F(e_{i+1}) - F(e_i)) / (w P)`` (seed: load = T_e / T_t).
    """
    n = max(int(np.ceil((t_end - t_begin) / width_s)), 1)
    edges = t_begin + width_s * np.arange(n + 1)
    cpu = curve.cpu_until(edges)
    return edges, np.diff(cpu) / (width_s * machine_procs)


def predicted_load(
    curve: UsageCurve,
    t: np.ndarray,
    machine_procs: float,
    window_s: float = 7 * 86400.0,
    trace_start_s: float = 0.0,
) -> np.ndarray:
    """Load predicted at submission times ``t``: the mean of the 30-minute interval loads of
    the week before t.

    The week is cut into equal intervals ending at t, so the mean of their loads equals the
    load over the whole window, ``(F(t) - F(t - W)) / (W P)``. Before ``trace_start_s`` there
    is no record, so the window is shortened to start there; at the very first instant the
    instantaneous load is used. Only jobs started before t enter ``F(t)`` (no leakage).
    """
    t = np.asarray(t, dtype=float)
    begin = np.minimum(np.maximum(t - window_s, trace_start_s), t)
    return curve.mean_load(begin, t, machine_procs)


def actual_load(
    curve: UsageCurve, start: np.ndarray, end: np.ndarray, machine_procs: float
) -> np.ndarray:
    """Each job's actual load: the mean load over its own execution ``[start, end]``.

    Known only once the job ended (then every job that ran beside it has started).
    """
    return curve.mean_load(start, end, machine_procs)


def machine_size(jobs: pd.DataFrame, declared: float | None = None) -> float:
    """P: the declared size (SWF MaxProcs), else the largest allocation or request seen."""
    if declared is not None and declared > 0:
        return float(declared)
    largest = max(float(jobs["allocated_procs"].max()), float(jobs["requested_procs"].max()))
    return max(largest, 1.0)


def trace_loads(
    jobs: pd.DataFrame, machine_procs: float, window_s: float = 7 * 86400.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Predicted load at submission, actual load, and end time of every job of a trace.

    Vectorised over the whole trace (HPC2N, 203k jobs: well under a second).
    """
    start, end, procs = job_spans(jobs)
    curve = UsageCurve.from_spans(start, end, procs)
    submit = jobs["submit_time"].to_numpy(dtype=float)
    trace_start = float(submit.min()) if submit.size else 0.0
    pred = predicted_load(curve, submit, machine_procs, window_s, trace_start)
    act = actual_load(curve, start, end, machine_procs)
    return pred, act, end
