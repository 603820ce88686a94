"""PySS interop: the exported SWF replays the same; PySS per-job output is read and diffed."""

from __future__ import annotations

import io

import numpy as np

from pyss_adapter.core.jobs import sim_jobs
from pyss_adapter.core.pyss_io import (
    compare_with_pyss,
    pyss_swf_lines,
    read_pyss_output,
    result_frame,
    write_pyss_swf,
)
from pyss_adapter.core.replay import replay, replay_jobs
from traces.core.swf import read_swf

SWF = """; MaxProcs: 10
1 0 -1 100 6 -1 -1 6 100 -1 1 1 1 -1 -1 -1 -1 -1
2 1 -1 80 8 -1 -1 8 50 -1 1 2 1 -1 -1 -1 -1 -1
3 2 -1 -1 3 -1 -1 3 50 -1 1 3 1 -1 -1 -1 -1 -1
4 3 -1 150 1 -1 -1 1 -1 -1 1 4 1 -1 -1 -1 -1 -1
5 3 -1 150 12 -1 -1 12 200 -1 1 4 1 -1 -1 -1 -1 -1
"""


def _trace():
    return read_swf(io.BytesIO(SWF.encode()), name="io.swf")


def test_exported_swf_replays_to_the_same_schedule_in_pyss_mode(tmp_path) -> None:
    jobs = sim_jobs(_trace().jobs, 10, "pyss")
    out = tmp_path / "for_pyss.swf"
    assert write_pyss_swf(jobs, out) == 5
    again = read_swf(out)
    assert again.header.machine_procs == 10
    first = replay_jobs(jobs, "easy")
    second = replay(again.jobs, 10, mode="pyss")
    assert np.array_equal(first.start_s, second.start_s)
    assert np.array_equal(first.end_s, second.end_s)


def test_export_header_counts_jobs_pyss_would_cut() -> None:
    jobs = sim_jobs(_trace().jobs, 10, "default")  # job 2 runs 80 s on a 50 s request
    lines = pyss_swf_lines(jobs)
    assert any("1 jobs overrun their estimate" in line for line in lines)
    assert sum(not line.startswith(";") for line in lines) == 4  # job 3 has no run time


def _pyss_output(starts: dict[int, int]) -> io.StringIO:
    """A PySS --output-swf file: job, submit, wait, run, procs, ..., estimate, ..."""
    rows = []
    for job, submit, run, procs, est in [(1, 0, 100, 6, 100), (2, 1, 50, 8, 80), (3, 2, 1, 3, 1),
                                         (4, 3, 150, 1, 150), (5, 3, 150, 10, 200)]:  # fmt: skip
        wait = starts[job] - submit
        rows.append(f"{job} {submit} {wait} {run} {procs} -1 -1 {procs} {est} -1 -1 1 "
                    "-1 -1 -1 -1 -1 -1")  # fmt: skip
    return io.StringIO("; Computer: Pyss Simulator\n" + "\n".join(rows) + "\n")


def test_comparing_with_pyss_output_finds_equal_and_different_starts() -> None:
    result = replay(_trace().jobs, 10, mode="pyss")
    ours = result_frame(result)
    starts = dict(
        zip(ours["job_id"].tolist(), ours["start_time"].astype(int).tolist(), strict=True)
    )
    same = compare_with_pyss(ours, read_pyss_output(_pyss_output(starts)))
    assert same["jobs_compared"] == 5
    assert same["different_start"] == 0
    starts[4] += 7
    diff = compare_with_pyss(ours, read_pyss_output(_pyss_output(starts)))
    assert diff["different_start"] == 1
    assert diff["max_abs_start_diff_s"] == 7
    assert diff["first_differences"][0]["job_id"] == 4


def test_read_pyss_output_computes_start_and_end() -> None:
    frame = read_pyss_output(_pyss_output({1: 0, 2: 100, 3: 2, 4: 3, 5: 180}))
    assert frame.loc[frame.job_id == 2, "start_time"].item() == 100
    assert frame.loc[frame.job_id == 5, "end_time"].item() == 330
