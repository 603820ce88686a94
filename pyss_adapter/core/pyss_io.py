"""Interop with the real PySS: an SWF it replays the same way, and a diff of its output.

``write_pyss_swf`` writes the *converted* jobs (submit, runtime, processors,
estimate) so that PySS's own conversion leaves them unchanged: for a record with
run time > 0, processors > 0 and submit >= 0 PySS takes ``max(requested, run, 1)``
as estimate and ``max(min(requested, run), 1)`` as runtime, which are ours when
runtime <= estimate. A default-mode job that overruns its estimate cannot be
expressed (PySS cuts it to its request); the writer counts them in its header.

``read_pyss_output`` reads the per-job SWF PySS writes with ``--output-swf``
(field 1 job number, 2 submit, 3 wait, 4 run time, 5 processors, 9 estimate), and
``compare_with_pyss`` diffs its start times against ours job by job.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from pyss_adapter.core.engine import ReplayResult
from pyss_adapter.core.jobs import SimJobs

_PYSS_OUTPUT_COLUMNS = {0: "job_id", 1: "submit_time", 2: "wait_time", 3: "run_time",
                        4: "processors", 8: "estimate"}  # fmt: skip


def pyss_swf_lines(jobs: SimJobs, note: str = "") -> list[str]:
    """SWF text (header + one line per job, in replay order) for PySS."""
    overrun = int((jobs.runtime_s > jobs.estimate_s).sum())
    header = [
        "; Version: 2.2",
        "; Computer: Queuecast export for PySS",
        f"; MaxProcs: {jobs.machine_procs}",
        f"; Note: converted in {jobs.mode} mode; run PySS with --num-processors "
        f"{jobs.machine_procs}",
        f"; Note: {overrun} jobs overrun their estimate (PySS will cut them to it)",
    ]
    if note:
        header.append(f"; Note: {note}")
    cols = [
        jobs.job_id,
        _ints(jobs.submit_s),
        np.full(len(jobs), -1),
        _ints(jobs.runtime_s),
        jobs.n_procs,
        *([np.full(len(jobs), -1)] * 2),
        jobs.n_procs,
        _ints(jobs.estimate_s),
        *([np.full(len(jobs), -1)] * 2),
        jobs.user_id,
        *([np.full(len(jobs), -1)] * 6),
    ]
    table = np.column_stack([np.asarray(c, dtype=np.int64) for c in cols])
    return header + [" ".join(map(str, row)) for row in table.tolist()]


def write_pyss_swf(jobs: SimJobs, dest: str | Path | IO[str], note: str = "") -> int:
    """Write the SWF for PySS to ``dest``; return the number of job lines."""
    text = "\n".join(pyss_swf_lines(jobs, note)) + "\n"
    if hasattr(dest, "write"):
        dest.write(text)
    else:
        Path(dest).write_text(text)
    return len(jobs)


def _ints(values: np.ndarray) -> np.ndarray:
    return np.rint(values).astype(np.int64)


def read_pyss_output(source: str | Path | IO) -> pd.DataFrame:
    """PySS's per-job output SWF as columns job_id, submit_time, start_time, end_time, ..."""
    raw = pd.read_csv(source, sep=r"\s+", comment=";", header=None)
    if raw.shape[1] < 9:
        raise ValueError(f"a PySS output line has 18 SWF fields, found {raw.shape[1]}")
    out = raw[list(_PYSS_OUTPUT_COLUMNS)].rename(columns=_PYSS_OUTPUT_COLUMNS)
    out["start_time"] = out["submit_time"] + out["wait_time"]
    out["end_time"] = out["start_time"] + out["run_time"]
    return out


def result_frame(result: ReplayResult) -> pd.DataFrame:
    """Our per-job output (the replay CSV): job number, submit, start, end, processors, estimate.

    The jobs as run (``processors``, ``release_time``: when a held job entered the
    queue) and the original request (``requested_processors``).
    """
    jobs = result.jobs
    return pd.DataFrame(
        {
            "job_id": jobs.job_id,
            "submit_time": jobs.submit_s,
            "start_time": result.start_s,
            "end_time": result.end_s,
            "processors": result.n_procs,
            "estimate": result.estimate_s,
            "wait_time": result.wait_s,
            "release_time": result.release_s,
            "requested_processors": jobs.n_procs,
        }
    )


def compare_with_pyss(ours: pd.DataFrame, pyss: pd.DataFrame) -> dict:
    """Diff start times by job number; ``ours`` from :func:`result_frame` or the replay CSV."""
    merged = ours.merge(pyss, on="job_id", how="outer", suffixes=("", "_pyss"), indicator=True)
    both = merged[merged["_merge"] == "both"]
    diff = both["start_time"].to_numpy() - both["start_time_pyss"].to_numpy()
    differing = both.loc[diff != 0, ["job_id", "start_time", "start_time_pyss"]]
    return {
        "jobs_compared": int(len(both)),
        "only_ours": int((merged["_merge"] == "left_only").sum()),
        "only_pyss": int((merged["_merge"] == "right_only").sum()),
        "same_start": int((diff == 0).sum()),
        "different_start": int(len(differing)),
        "max_abs_start_diff_s": float(np.abs(diff).max()) if len(diff) else 0.0,
        "first_differences": differing.head(10).to_dict(orient="records"),
    }
