"""System state at each job's submit time: 16 feature summaries and 6 histograms, per queue.

docs/apq.md "System state at t" and "Which jobs"; the paper "End-to-End Predictions-Based
Resource Management Framework for Supercomputer Jobs" Tables I-II.

Semantics (all per queue, SWF field 15; -1 is a queue value like any other, so a trace
without queues is one queue):

- The state of target ``i`` at ``t = submit_i`` is built from rows ``0..i`` only (rows are
  sorted by submit time; a job submitted in the same second but on a later row has not
  arrived yet). This is the leakage rule: nothing from a later row can enter.
- W (waiting) = earlier rows ``j < i`` with ``start_j > t``, plus the target itself
  (with time waited 0). R (running) = earlier rows with ``start_j <= t < end_j``.
  Ties: a job that starts exactly at ``t`` is running, not waiting; a job that ends
  exactly at ``t`` is gone.
- ``start = submit + wait``, ``end = start + run``. Jobs with wait -1 (never started, or
  unknown) are left out of every state: how long they sat in the queue is unknown. Jobs
  that never ran (run -1, or 0 allocated processors) count in W while they waited and
  never in R. Jobs with no submit time (-1) are left out.
- Requested processors = SWF field 8, falling back to field 5 when missing; requested
  time (ERT) = field 9, 0 when missing (an unknown estimate adds nothing).

Method: each job is a *row interval* of the targets whose W (or R) it belongs to, because
submit times are sorted: j is in W_i for rows ``i`` in ``[j+1, first row submitted at or
after start_j)`` and in R_i for rows in ``[max(j+1, first row at/after start_j), first
row at/after end_j)``. Sums over W/R for every target are then difference arrays over the
rows of the same group (queue, or queue+user) and one cumulative sum: O(n log n) for the
whole trace. "Time waited so far" is ``count * t - sum(submit)``, "run so far" is
``count * t - sum(start)``. The histograms' value sets are the same intervals expanded
into a CSR membership list (:mod:`predictor.core.state.histograms`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from predictor.core.state import histograms as hg

SUMMARY_NAMES: tuple[str, ...] = (
    "req_procs",
    "req_time_s",
    "user_wait_count",
    "user_wait_proc_time",
    "user_wait_procs",
    "user_wait_req_time_s",
    "user_run_count",
    "user_run_proc_time",
    "user_run_procs",
    "user_run_req_time_s",
    "queue_wait_req_time_s",
    "queue_wait_procs",
    "queue_waited_s",
    "queue_run_req_time_s",
    "queue_run_procs",
    "queue_run_elapsed_s",
)
ProgressFn = Callable[[float], None]


@dataclass
class JobArrays:
    """The columns the state needs, as numpy arrays (row i = job i, sorted by submit)."""

    submit: np.ndarray
    start: np.ndarray  # +inf when the job never started (not present)
    end: np.ndarray  # == start when the job never ran
    procs: np.ndarray
    ert: np.ndarray
    wait: np.ndarray
    queue: np.ndarray
    user: np.ndarray
    present: np.ndarray  # counts in W while waiting
    runs: np.ndarray  # counts in R while running

    @property
    def n(self) -> int:
        return len(self.submit)


def known_submit(submit: np.ndarray) -> np.ndarray:
    """Rows with a submit time: every value but SWF's missing marker, -1. A site's history
    counts seconds from the site's epoch, so its past (a warm-up copy, an sacct import) is
    negative and known; ``submit >= 0`` left all of it out of every state and every method's
    history (docs/results.md, "Which wait a site tells")."""
    return np.asarray(submit, dtype=np.float64) != -1.0


def job_arrays(jobs: pd.DataFrame) -> JobArrays:
    """Extract and clean the state columns (see the module docstring for the rules)."""
    submit = jobs["submit_time"].to_numpy(np.float64)
    if np.any(np.diff(submit) < 0):
        raise ValueError("jobs must be sorted by submit_time (read_swf does this)")
    wait = jobs["wait_time"].to_numpy(np.float64)
    run = jobs["run_time"].to_numpy(np.float64)
    req = jobs["requested_procs"].to_numpy(np.float64)
    alloc = jobs["allocated_procs"].to_numpy(np.float64)
    procs = np.where(req > 0, req, np.maximum(alloc, 0.0))
    ert = np.maximum(jobs["requested_time"].to_numpy(np.float64), 0.0)
    present = known_submit(submit) & (wait >= 0)
    runs = present & (run >= 0) & (alloc != 0) & (procs > 0)
    start = np.where(present, submit + np.maximum(wait, 0.0), np.inf)
    end = np.where(runs, start + np.maximum(run, 0.0), start)
    return JobArrays(
        submit=submit,
        start=start,
        end=end,
        procs=procs,
        ert=ert,
        wait=wait,
        queue=jobs["queue_id"].to_numpy(np.int64),
        user=jobs["user_id"].to_numpy(np.int64),
        present=present,
        runs=runs,
    )


@dataclass
class StateSweep:
    """The state of every job of a trace at its submit time.

    summary : (n, 16) float64, columns ``summary_names`` (spec features 1..16 in order).
    hist : (n, 6, B) float32 relative frequencies over fixed log-scale bins, the six
        spec histograms in order (W ERT, W procs, W waited, R ERT, R procs, R run so far).
    wait_count, run_count : (n,) sizes of W (target included) and R in the target's queue.
    w_ptr, w_members, r_ptr, r_members : CSR membership: the W set of target i is
        ``w_members[w_ptr[i]:w_ptr[i+1]]`` (rows, target excluded); same for R.
    edges : (6, B+1) histogram bin edges on the log1p scale.
    """

    summary: np.ndarray
    summary_names: tuple[str, ...]
    hist: np.ndarray
    wait_count: np.ndarray
    run_count: np.ndarray
    w_ptr: np.ndarray
    w_members: np.ndarray
    r_ptr: np.ndarray
    r_members: np.ndarray
    edges: np.ndarray
    arrays: JobArrays

    def hist_values(self, i: int) -> list[np.ndarray]:
        """The six value sets of target ``i`` (spec Table "Distributions"), exact values."""
        a, t = self.arrays, self.arrays.submit[i]
        w = self.w_members[self.w_ptr[i] : self.w_ptr[i + 1]]
        r = self.r_members[self.r_ptr[i] : self.r_ptr[i + 1]]
        return hg.value_sets(a, t, w, r, a.ert[i], a.procs[i])


def _group_codes(*keys: np.ndarray) -> np.ndarray:
    stacked = np.stack(keys, axis=1) if len(keys) > 1 else keys[0][:, None]
    return np.unique(stacked, axis=0, return_inverse=True)[1].ravel().astype(np.int64)


def wait_intervals(a: JobArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(jobs, lo, hi): job ``jobs[k]`` is in W_i for rows ``lo[k] <= i < hi[k]``."""
    jobs = np.flatnonzero(a.present)
    lo = jobs + 1
    hi = np.searchsorted(a.submit, a.start[jobs], side="left")
    keep = hi > lo
    return jobs[keep], lo[keep], hi[keep]


def run_intervals(a: JobArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(jobs, lo, hi): job ``jobs[k]`` is in R_i for rows ``lo[k] <= i < hi[k]``."""
    jobs = np.flatnonzero(a.runs)
    lo = np.maximum(jobs + 1, np.searchsorted(a.submit, a.start[jobs], side="left"))
    hi = np.searchsorted(a.submit, a.end[jobs], side="left")
    keep = hi > lo
    return jobs[keep], lo[keep], hi[keep]


class _GroupRows:
    """Rows sorted by (group, row): maps a row interval of one group to sorted positions."""

    def __init__(self, group: np.ndarray) -> None:
        self.n = len(group)
        self.group = group
        self.order = np.lexsort((np.arange(self.n), group))
        self.key = group[self.order] * (self.n + 1) + self.order

    def positions(self, jobs: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.key, self.group[jobs] * (self.n + 1) + rows, side="left")

    def interval_sums(
        self, jobs: np.ndarray, lo: np.ndarray, hi: np.ndarray, x: np.ndarray
    ) -> np.ndarray:
        """(n, k): for each row i, the sum of ``x[j]`` over intervals of its group covering i."""
        p_lo, p_hi = self.positions(jobs, lo), self.positions(jobs, hi)
        out = np.empty((self.n, x.shape[1]))
        for c in range(x.shape[1]):
            diff = np.bincount(p_lo, x[jobs, c], self.n + 1)
            diff -= np.bincount(p_hi, x[jobs, c], self.n + 1)
            out[self.order, c] = np.cumsum(diff[: self.n])
        return out


def membership(
    queue: np.ndarray,
    jobs: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    counts: np.ndarray,
    chunk: int = 8192,
) -> tuple[np.ndarray, np.ndarray]:
    """CSR (ptr, member rows int32) of the intervals expanded per covered row of the same queue.

    Filled in chunks of target rows so the temporary arrays stay small (HPC2N has 23 M
    W memberships); ``counts`` (members per row, from the interval sums) sizes the output.
    Within a row, members are in row order.
    """
    n = len(queue)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.rint(counts).astype(np.int64), out=ptr[1:])
    members = np.empty(ptr[-1], dtype=np.int32)
    for r0 in range(0, n, chunk):
        r1 = min(n, r0 + chunk)
        sel = (lo < r1) & (hi > r0)
        j, a, b = jobs[sel], np.maximum(lo[sel], r0), np.minimum(hi[sel], r1)
        length = b - a
        rows = np.repeat(a - np.cumsum(length) + length, length) + np.arange(length.sum())
        owner = np.repeat(j, length)
        keep = queue[rows] == queue[owner]
        rows, owner = rows[keep], owner[keep]
        order = np.lexsort((owner, rows))
        members[ptr[r0] : ptr[r1]] = owner[order]
    return ptr, members


def _per_job_columns(a: JobArrays, when: np.ndarray) -> np.ndarray:
    """Columns summed over W/R: count, procs x ERT, procs, ERT, and a time (submit/start)."""
    time = np.where(np.isfinite(when), when, 0.0)
    return np.column_stack([np.ones(a.n), a.procs * a.ert, a.procs, a.ert, time])


def summary_columns(
    procs: np.ndarray,
    ert: np.ndarray,
    uw: np.ndarray,
    ur: np.ndarray,
    qw: np.ndarray,
    qr: np.ndarray,
    t: np.ndarray,
) -> np.ndarray:
    """The 16 summaries (``SUMMARY_NAMES``) from the W/R sums of each target; shape (n, 16).

    ``uw``/``ur``: the user's (n, 4) sums over waiting/running jobs (count, procs x ERT,
    procs, ERT); ``qw``/``qr``: the queue's (n, 5) sums, the fifth the summed submit
    (waiting) or start (running) time, so ``count * t - sum`` is the total time waited or
    run so far (Tables I-II of the seed, "System state"). One copy for the sweep over a log
    and the features of a snapshot's requests.
    """
    return np.column_stack(
        [
            procs,
            ert,
            uw,
            ur,
            qw[:, 3],
            qw[:, 2],
            np.maximum(qw[:, 0] * t - qw[:, 4], 0.0),
            qr[:, 3],
            qr[:, 2],
            np.maximum(qr[:, 0] * t - qr[:, 4], 0.0),
        ]
    )


def summaries(a: JobArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(summary (n, 16), queue wait count, queue run count) for every row; see module doc."""
    queue_rows = _GroupRows(_group_codes(a.queue))
    user_rows = _GroupRows(_group_codes(a.queue, a.user))
    w_iv, r_iv = wait_intervals(a), run_intervals(a)
    xw, xr = _per_job_columns(a, a.submit), _per_job_columns(a, a.start)
    own = _per_job_columns(a, a.submit)  # the target itself is waiting, waited 0
    qw = queue_rows.interval_sums(*w_iv, xw) + own
    qr = queue_rows.interval_sums(*r_iv, xr)
    uw = user_rows.interval_sums(*w_iv, xw[:, :4]) + own[:, :4]
    ur = user_rows.interval_sums(*r_iv, xr[:, :4])
    t = a.submit
    summary = summary_columns(a.procs, a.ert, uw, ur, qw, qr, t)
    return summary, qw[:, 0], qr[:, 0]


def compute_state(
    jobs: pd.DataFrame, progress: ProgressFn | None = None, *, hist_bins: int = 10
) -> StateSweep:
    """System state of every job at its submit time, in one vectorised sweep.

    Parameters
    ----------
    jobs : SWF jobs (``traces.core.swf.SWF_FIELDS`` columns), sorted by submit time.
    progress : optional callback with the fraction done.
    hist_bins : bins of the precomputed fixed-range histograms.

    Returns
    -------
    StateSweep; ``summary[i]`` holds the spec's 16 features of job i at ``submit_i``.
    """
    report = progress or (lambda _f: None)
    a = job_arrays(jobs)
    summary, wait_count, run_count = summaries(a)
    report(0.3)
    w_ptr, w_members = membership(a.queue, *wait_intervals(a), wait_count - 1)
    r_ptr, r_members = membership(a.queue, *run_intervals(a), run_count)
    report(0.6)
    edges = hg.trace_edges(hist_bins)
    hist = hg.fixed_histograms(a, w_ptr, w_members, r_ptr, r_members, edges)
    report(1.0)
    return StateSweep(
        summary=summary,
        summary_names=SUMMARY_NAMES,
        hist=hist,
        wait_count=wait_count,
        run_count=run_count,
        w_ptr=w_ptr,
        w_members=w_members,
        r_ptr=r_ptr,
        r_members=r_members,
        edges=edges,
        arrays=a,
    )
