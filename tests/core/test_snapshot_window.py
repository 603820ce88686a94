"""``from_log`` scans only the rows that may still wait or run at ``t`` (``LogColumns.reach_max``):
the same W and R as testing every row, on logs with unknown waits and runtimes, jobs that never
ran, very long jobs early in the log, and instants exactly at submits, starts and ends."""

from __future__ import annotations

import numpy as np

from predictor.core.state.snapshot import LogColumns, from_log
from tests.conftest import synthetic_log


def brute(log, t: float, n: int) -> tuple[set[int], set[int]]:
    """W and R at ``t`` among the first ``n`` rows, every row tested (the rule of the sweep)."""
    submit = log["submit_time"].to_numpy(float)[:n]
    wait = log["wait_time"].to_numpy(float)[:n]
    run = log["run_time"].to_numpy(float)[:n]
    alloc = log["allocated_procs"].to_numpy(float)[:n]
    procs = np.where(alloc > 0, alloc, log["requested_procs"].to_numpy(float)[:n])
    present = (submit >= 0) & (wait >= 0)
    runs = present & (run >= 0) & (alloc != 0) & (procs > 0)
    start = np.where(present, submit + np.maximum(wait, 0), np.inf)
    end = np.where(runs, start + np.maximum(run, 0), start)
    ids = log["job_id"].to_numpy()[:n]
    waiting = set(ids[present & (start > t)].tolist())
    running = set(ids[runs & (start <= t) & (end > t)].tolist())
    return waiting, running


def test_the_scanned_window_gives_every_rows_answer() -> None:
    skipped = []
    for seed in range(4):
        log = synthetic_log(500, seed=seed)
        run = log["run_time"].to_numpy(float).copy()
        run[[3, 40]] = [3e4, 6e4]  # two long jobs early: the window reaches back to them
        log["run_time"] = run
        cols = LogColumns.of(log)
        submit = log["submit_time"].to_numpy(float)
        start = submit + np.maximum(log["wait_time"].to_numpy(float), 0)
        end = start + np.maximum(run, 0)
        instants = np.unique(np.r_[submit, start, end, start - 0.5, end + 0.5])[::3]
        for t in instants[(instants >= submit[0]) & (instants <= submit[-1] + 1e4)]:
            skipped.append(int(np.searchsorted(cols.reach_max, t, side="right")))
            snap = from_log(log, float(t), machine_procs=128, columns=cols)
            n = int(np.searchsorted(submit, t, side="right"))
            waiting, running = brute(log, float(t), n)
            assert set(snap.waiting.requests.job_id.tolist()) == waiting
            assert set(snap.running.requests.job_id.tolist()) == running
            k = max(n - 7, 0)  # a row's own arrival: only the first k rows have arrived
            mine = from_log(log, float(t), machine_procs=128, rows=k, columns=cols)
            assert set(mine.waiting.requests.job_id.tolist()) == brute(log, float(t), k)[0]
    assert max(skipped) > 300 and min(skipped) == 0  # late instants skip most rows
