"""The trace dashboard's figures on a hand-made job table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from traces.core.dashboard import DAY_S, dashboard, time_bin_s


def jobs() -> pd.DataFrame:
    # day 0: two jobs (4 procs x 1 h, 1 proc x 2 h); day 2: one 300-proc job of 1 day
    return pd.DataFrame({
        "submit_time": [0.0, 3600.0, 2 * DAY_S + 10],
        "wait_time": [30.0, 7200.0, -1.0],
        "run_time": [3600.0, 7200.0, DAY_S],
        "allocated_procs": [4, -1, 300],
        "requested_procs": [4, 1, 300],
    })  # fmt: skip


def test_jobs_per_day_and_offered_load_over_the_machine() -> None:
    board = dashboard(jobs(), machine_procs=400)
    assert board["bin_s"] == 3600.0 and board["jobs_per_bin"].size == 49
    counts = board["jobs_per_bin"]
    assert (counts[0], counts[1], counts[48], counts.sum()) == (1, 1, 1, 3)
    # hour 0: 4 x 3600 / (400 x 3600); hour 48: 300 x 86400 / (400 x 3600)
    assert board["load"][0] == 0.01 and board["load"][48] == 18.0


def test_wait_classes_count_known_waits_only() -> None:
    wait = dashboard(jobs(), 400)["wait"]
    assert wait["known"] == 2 and wait["jobs"].tolist() == [1, 0, 0, 1, 0, 0]


def test_size_mix_uses_the_request_where_the_allocation_is_missing() -> None:
    sizes = dashboard(jobs(), 400)["sizes"]
    assert sizes["jobs"].tolist() == [1, 1, 0, 0, 0, 1]
    assert np.allclose(sizes["cpu_hours"], [2.0, 4.0, 0, 0, 0, 7200.0])
    assert np.isclose(sizes["job_share"].sum(), 1) and np.isclose(sizes["cpu_hour_share"].sum(), 1)


def test_long_logs_get_wider_bins() -> None:
    assert time_bin_s(DAY_S) == 3600.0 and time_bin_s(100 * DAY_S) == DAY_S
    assert time_bin_s(1000 * DAY_S) == 7 * DAY_S and time_bin_s(30000 * DAY_S) == 150 * DAY_S
