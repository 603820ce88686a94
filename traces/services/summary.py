"""Numbers stored on a ``Trace`` row, computed once from the parsed log."""

from __future__ import annotations

from typing import Any

import numpy as np

from traces.core.swf import SwfTrace


def trace_summary(parsed: SwfTrace) -> dict[str, Any]:
    """Field values for ``Trace``: header, counts, submit span, machine size, utilisation."""
    submit = parsed.jobs["submit_time"].to_numpy()
    known = submit[submit >= 0]
    machine_procs = parsed.machine_procs
    return {
        "header": parsed.header.to_dict(),
        "job_count": len(parsed.jobs),
        "first_submit_s": float(known.min()) if known.size else None,
        "last_submit_s": float(known.max()) if known.size else None,
        "machine_procs": machine_procs,
        "utilisation": utilisation(parsed, machine_procs),
        "ingest_report": parsed.report.to_dict(),
    }


def utilisation(parsed: SwfTrace, machine_procs: int | None) -> float | None:
    """Share of the machine's processor-seconds the jobs used over the log.

    ``U = sum(run_time * allocated_procs) / (P * (max end - min submit))`` with
    ``end = submit + max(wait, 0) + run_time``; jobs whose submit time, run time
    or allocation is missing (-1) are left out of both sums. When a log has no
    wait times (the synthetic Lublin logs) this is the offered load and may exceed 1.
    """
    jobs = parsed.jobs
    submit = jobs["submit_time"].to_numpy(np.float64)
    run = jobs["run_time"].to_numpy(np.float64)
    procs = jobs["allocated_procs"].to_numpy(np.float64)
    ok = (submit >= 0) & (run >= 0) & (procs > 0)
    if not machine_procs or not ok.any():
        return None
    wait = np.maximum(jobs["wait_time"].to_numpy(np.float64), 0.0)
    span = float((submit + wait + run)[ok].max() - submit[ok].min())
    if span <= 0:
        return None
    return float((run[ok] * procs[ok]).sum() / (machine_procs * span))
