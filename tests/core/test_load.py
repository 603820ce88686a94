"""Load: interval loads, predicted load at submission and actual load, by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from predictor.core.runtime.load import (
    UsageCurve,
    actual_load,
    interval_loads,
    job_spans,
    machine_size,
    predicted_load,
    trace_loads,
)
from traces.core.swf import SWF_FIELDS


def make_jobs(rows: list[dict]) -> pd.DataFrame:
    """A jobs frame with the 18 SWF columns; unspecified fields are -1 (procs 1, time 1000)."""
    defaults = {f: -1 for f in SWF_FIELDS}
    defaults.update(
        wait_time=0,
        allocated_procs=1,
        requested_procs=1,
        requested_time=1000,
        user_id=1,
        group_id=1,
        queue_id=1,
    )
    frame = pd.DataFrame([{**defaults, "job_id": i + 1, **r} for i, r in enumerate(rows)])
    for col in ("submit_time", "wait_time", "run_time", "requested_time"):
        frame[col] = frame[col].astype(float)
    return frame[list(SWF_FIELDS)]


# Machine of 4 processors. A: 2 procs on [0, 100); B: 2 procs on [50, 150).
TWO_JOBS = make_jobs([
    {"submit_time": 0, "run_time": 100, "allocated_procs": 2},
    {"submit_time": 50, "run_time": 100, "allocated_procs": 2},
])  # fmt: skip


def test_interval_loads_match_hand_computation() -> None:
    curve = UsageCurve.from_spans(*job_spans(TWO_JOBS))
    edges, loads = interval_loads(curve, 4, 0.0, 150.0, width_s=50.0)
    # [0,50): A 2x50 = 100 CPU-s / 200; [50,100): A+B 200 / 200; [100,150): B 100 / 200.
    np.testing.assert_allclose(edges, [0, 50, 100, 150])
    np.testing.assert_allclose(loads, [0.5, 1.0, 0.5])


def test_predicted_load_is_the_mean_of_the_window_before_t() -> None:
    curve = UsageCurve.from_spans(*job_spans(TWO_JOBS))
    # Window [0, 150): 400 CPU-s / (150 x 4) = 2/3; window of 50 s before t=100: load 1.
    np.testing.assert_allclose(predicted_load(curve, np.array([150.0]), 4, 150.0), [2 / 3])
    np.testing.assert_allclose(predicted_load(curve, np.array([100.0]), 4, 50.0), [1.0])


def test_predicted_load_window_starts_at_the_trace_start() -> None:
    curve = UsageCurve.from_spans(*job_spans(TWO_JOBS))
    # A week-long window at t=50 only covers [0, 50): load 0.5, not diluted by empty time.
    np.testing.assert_allclose(predicted_load(curve, np.array([50.0]), 4), [0.5])


def test_actual_load_is_the_mean_load_over_the_job_execution() -> None:
    start, end, procs = job_spans(TWO_JOBS)
    curve = UsageCurve.from_spans(start, end, procs)
    # A on [0,100): A 200 + B 100 CPU-s over 100 s x 4 = 0.75; B on [50,150): 0.75 too.
    np.testing.assert_allclose(actual_load(curve, start, end, 4), [0.75, 0.75])


def test_zero_length_job_gets_the_instantaneous_load() -> None:
    jobs = make_jobs([
        {"submit_time": 0, "run_time": 100, "allocated_procs": 2},
        {"submit_time": 10, "run_time": 0, "allocated_procs": 1},
    ])  # fmt: skip
    start, end, procs = job_spans(jobs)
    curve = UsageCurve.from_spans(start, end, procs)
    assert actual_load(curve, start, end, 4)[1] == pytest.approx(0.5)


def test_predicted_load_ignores_how_long_a_running_job_will_still_run() -> None:
    longer = TWO_JOBS.copy()
    longer.loc[1, "run_time"] = 5000.0  # B ends long after t = 120
    for frame in (TWO_JOBS, longer):
        curve = UsageCurve.from_spans(*job_spans(frame))
        assert predicted_load(curve, np.array([120.0]), 4)[0] == pytest.approx(
            (200 + 2 * 70) / (120 * 4)
        )


def test_wait_delays_the_start_and_missing_procs_use_the_request() -> None:
    jobs = make_jobs(
        [
            {
                "submit_time": 0,
                "wait_time": 30,
                "run_time": 10,
                "allocated_procs": -1,
                "requested_procs": 3,
            }
        ]
    )
    start, end, procs = job_spans(jobs)
    assert (start[0], end[0], procs[0]) == (30.0, 40.0, 3.0)


def test_machine_size_prefers_the_declared_size() -> None:
    assert machine_size(TWO_JOBS, 128) == 128
    assert machine_size(TWO_JOBS, None) == 2


def test_trace_loads_returns_one_value_per_job() -> None:
    pred, act, end = trace_loads(TWO_JOBS, 4)
    assert pred.shape == act.shape == end.shape == (2,)
    np.testing.assert_allclose(end, [100, 150])


def test_a_contexts_load_at_reads_the_window_from_the_logs_first_arrival() -> None:
    """``RuntimeContext.load_at`` finds the log's first arrival once; the loads it gives are
    the window's from that arrival, as computed afresh."""
    from predictor.core.runtime.history import RuntimeContext
    from predictor.core.runtime.params import RuntimeParams

    jobs = make_jobs([
        {"submit_time": 40, "run_time": 100, "allocated_procs": 2},
        {"submit_time": 90, "run_time": 100, "allocated_procs": 2},
    ])  # fmt: skip
    ctx = RuntimeContext(jobs, 4.0, 1, RuntimeParams())
    t = np.array([60.0, 140.0, 400.0])
    want = predicted_load(ctx.curve, t, 4.0, ctx.params.load_window_s, 40.0)
    np.testing.assert_array_equal(ctx.load_at(t), want)
    np.testing.assert_array_equal(ctx.load_at(t), want)  # the kept first arrival
    assert ctx.load_at(60.0)[0] == pytest.approx(2 * 20 / (20 * 4))  # from 40 s, not from 0
