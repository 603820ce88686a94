"""Start-time estimates from simulation (what squeue --start gives)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pyss_adapter.core.start_estimate import simulated_waits


def _frame(rows: list[tuple[float, float, float, int, float]]) -> pd.DataFrame:
    """rows: (submit, wait, run, procs, requested time)."""
    submit, wait, run, procs, req = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
    return pd.DataFrame({
        "submit_time": submit, "wait_time": wait, "run_time": run,
        "allocated_procs": procs.astype(int), "requested_procs": procs.astype(int),
        "requested_time": req,
    })  # fmt: skip


# 0 holds the 4-processor machine until 100 (asked for 100 s); 1 (2 procs) and
# 2 (4 procs) queue behind it; 3 (1 proc, 10 s) arrives when 1 is running.
ROWS = [(0, 0, 100, 4, 100), (10, 90, 50, 2, 50), (20, 130, 10, 4, 10), (110, 0, 10, 1, 10)]


def test_simulated_wait_is_the_easy_start_of_the_known_queue() -> None:
    waits = simulated_waits(_frame(ROWS), np.array([0, 1, 2, 3]), 4)
    # 1 starts when 0 ends (100); 2 needs the whole machine: after 1 ends (150);
    # 3 at 110: 1 runs until 150 with 2 reserved at 150, 3 ends at 120 -> backfills.
    assert waits.tolist() == [0, 90, 130, 0]


def test_targets_keep_their_order_and_actual_starts_can_be_given() -> None:
    frame = _frame(ROWS)
    starts = np.array([0, 100, 150, 110])
    waits = simulated_waits(frame, np.array([2, 1]), 4, actual_starts=starts)
    assert waits.tolist() == [130, 90]


def test_a_running_job_past_its_request_is_expected_to_end_within_a_second() -> None:
    # 0 asked for 10 s but runs 100 s; at 50 the simulation expects it to end at 51.
    rows = [(0, 0, 100, 4, 10), (50, 50, 10, 4, 10)]
    assert simulated_waits(_frame(rows), np.array([1]), 4).tolist() == [1]


def test_a_target_behind_a_blocked_head_and_a_long_backfill_starts_after_the_head() -> None:
    # 0 runs 3 of 4 processors until 100; 1 (2 procs) is the blocked head: shadow 100,
    # extra 4 - 2 = 2. 2 (1 proc, 200 s) ends after the shadow but fits in the extra:
    # it backfills at 20. 3 (1 proc, 10 s) finds no free processor: when 0 ends at 100,
    # 1 starts (2 of 3 free), then 3 (the last one).
    rows = [(0, 0, 100, 3, 100), (10, 90, 50, 2, 50), (20, 0, 200, 1, 200), (30, 70, 10, 1, 10)]
    waits = simulated_waits(_frame(rows), np.array([0, 1, 2, 3]), 4)
    assert waits.tolist() == [0, 90, 0, 70]


def test_a_target_that_becomes_the_blocked_head_starts_at_its_shadow() -> None:
    # 1 needs the whole machine: blocked head behind 0 (ends 100) and nothing else to
    # come: its shadow, 100, is its start whatever is backfilled later.
    rows = [(0, 0, 100, 3, 100), (10, 90, 50, 4, 50)]
    assert simulated_waits(_frame(rows), np.array([1]), 4).tolist() == [90]


def test_unsorted_jobs_are_refused() -> None:
    rows = [(10, 0, 10, 1, 10), (0, 0, 10, 1, 10)]
    with pytest.raises(ValueError, match="sorted by submit_time"):
        simulated_waits(_frame(rows), np.array([0]), 4)
