"""Replaying a log as it happened: RecordedScheduler and the engine's wake-ups."""

from __future__ import annotations

import numpy as np
import pytest

from pyss_adapter.core.engine import Engine
from pyss_adapter.core.jobs import sim_jobs_from_arrays
from pyss_adapter.core.recorded import RecordedScheduler


def _jobs(rows: list[tuple[float, float, float, int]], procs: int):
    submit, run, est, n = (np.array(c) for c in zip(*rows, strict=True))
    return sim_jobs_from_arrays(submit, run, est, n, procs)


def test_jobs_start_at_their_recorded_times_even_when_no_event_marks_them() -> None:
    # 1 starts at 37 and 2 at 55: no submission or termination happens then.
    jobs = _jobs([(0, 10, 10, 2), (5, 10, 10, 2), (20, 10, 10, 2)], 4)
    starts = np.array([0.0, 37.0, 55.0])
    result = Engine(jobs, RecordedScheduler(starts)).run()
    np.testing.assert_array_equal(result.start_s, starts)


def test_recorded_starts_may_exceed_the_machine_as_a_real_log_can() -> None:
    jobs = _jobs([(0, 10, 10, 3), (0, 10, 10, 3)], 4)
    result = Engine(jobs, RecordedScheduler(np.array([0.0, 0.0]))).run()
    assert result.start_s.tolist() == [0, 0]


def test_a_start_recorded_before_the_submission_happens_at_the_submission() -> None:
    jobs = _jobs([(10, 5, 5, 1)], 4)
    assert Engine(jobs, RecordedScheduler(np.array([3.0]))).run().start_s.tolist() == [10]


def test_wake_at_refuses_the_past_and_missing_starts_are_refused() -> None:
    engine = Engine(_jobs([(0, 5, 5, 1)], 4), RecordedScheduler(np.array([0.0])))
    engine.now = 10.0
    with pytest.raises(ValueError, match="not after now"):
        engine.wake_at(10.0)
    with pytest.raises(ValueError, match="finite recorded start"):
        RecordedScheduler(np.array([np.nan]))
