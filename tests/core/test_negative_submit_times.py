"""A site's past lies before its epoch (negative seconds): it is known, not SWF's missing -1
(``predictor.core.state.sweep.known_submit``, ``predictor.core.wait.history.usable_mask``)."""

from __future__ import annotations

import numpy as np

from predictor.core.state.snapshot import from_log
from predictor.core.state.sweep import compute_state, known_submit
from predictor.core.wait.history import usable_mask
from tests.core.wait_fakes import make_jobs


def test_only_minus_one_is_a_missing_submit_time() -> None:
    assert known_submit(np.array([-1.0, -2.0, -0.5, 0.0, 7.0])).tolist() == [
        False, True, True, True, True,
    ]  # fmt: skip


def test_a_log_moved_before_its_epoch_has_the_same_states_and_usable_jobs() -> None:
    jobs = make_jobs(300)
    past = jobs.copy()
    past["submit_time"] = jobs["submit_time"] - float(jobs["submit_time"].max()) - 10_000.0
    assert (past["submit_time"] < -1).all()
    here, there = compute_state(jobs), compute_state(past)
    np.testing.assert_array_equal(here.summary, there.summary)
    np.testing.assert_array_equal(here.hist, there.hist)
    np.testing.assert_array_equal(here.w_members, there.w_members)
    assert (here.run_count > 0).any()  # something was running: the states are not empty
    assert usable_mask(past)[0].all() and usable_mask(past)[1]["no_submit_time"] == 0
    i = 250
    snap_here = from_log(jobs, float(jobs["submit_time"].iat[i]), machine_procs=128, rows=i)
    snap_there = from_log(past, float(past["submit_time"].iat[i]), machine_procs=128, rows=i)
    assert len(snap_there.running) == len(snap_here.running) > 0
    assert len(snap_there.waiting) == len(snap_here.waiting)


def test_a_missing_submit_time_still_leaves_the_job_out() -> None:
    jobs = make_jobs(50)
    jobs.loc[0, "submit_time"] = -1.0
    mask, excluded = usable_mask(jobs)
    assert not mask[0] and excluded["no_submit_time"] == 1
    assert not compute_state(jobs).arrays.present[0]
