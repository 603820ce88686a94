"""System-state sweep: hand-computed small cases, ties, per-user features, brute-force check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from predictor.core.state import histograms as hg
from predictor.core.state import sweep as st
from predictor.core.state.features import state_features
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import from_log
from predictor.core.state.sweep import SUMMARY_NAMES, compute_state
from traces.core.swf import SWF_FIELDS


def make_jobs(rows: list[dict]) -> pd.DataFrame:
    """SWF frame from dicts of submit, wait, run, procs, ert, user (queue -1 by default)."""
    frame = pd.DataFrame({f: np.full(len(rows), -1.0) for f in SWF_FIELDS})
    for i, r in enumerate(rows):
        frame.loc[i, "job_id"] = i + 1
        frame.loc[i, "submit_time"] = r["submit"]
        frame.loc[i, "wait_time"] = r["wait"]
        frame.loc[i, "run_time"] = r["run"]
        frame.loc[i, "allocated_procs"] = r.get("alloc", r["procs"])
        frame.loc[i, "requested_procs"] = r["procs"]
        frame.loc[i, "requested_time"] = r["ert"]
        frame.loc[i, "user_id"] = r["user"]
        frame.loc[i, "group_id"] = 1
        frame.loc[i, "queue_id"] = r.get("queue", -1)
    ints = ["job_id", "allocated_procs", "requested_procs", "user_id", "group_id", "queue_id"]
    return frame.astype({c: np.int64 for c in ints})


# starts: 10, 5, 15, 10, 30; ends: 110, 30, 45, 20, 40
TIES = make_jobs(
    [
        dict(submit=0, wait=10, run=100, procs=2, ert=200, user=1),
        dict(submit=5, wait=0, run=25, procs=4, ert=50, user=2),
        dict(submit=10, wait=5, run=30, procs=1, ert=60, user=1),
        dict(submit=10, wait=0, run=10, procs=8, ert=100, user=1),
        dict(submit=30, wait=0, run=10, procs=3, ert=40, user=2),
    ]
)
# Columns: procs, ert | user W: n, p*e, p, e | user R: n, p*e, p, e | W: e, p, waited | R: e, p, ran
TIES_EXPECTED = np.array(
    [
        [2, 200, 1, 400, 2, 200, 0, 0, 0, 0, 200, 2, 0, 0, 0, 0],
        [4, 50, 1, 200, 4, 50, 0, 0, 0, 0, 250, 6, 5, 0, 0, 0],
        [1, 60, 1, 60, 1, 60, 1, 400, 2, 200, 60, 1, 0, 250, 6, 5],
        [8, 100, 2, 860, 9, 160, 1, 400, 2, 200, 160, 9, 0, 250, 6, 5],
        [3, 40, 1, 120, 3, 40, 0, 0, 0, 0, 40, 3, 0, 260, 3, 35],
    ],
    dtype=float,
)


def test_summary_has_sixteen_named_columns_in_spec_order():
    sweep = compute_state(TIES)
    assert sweep.summary.shape == (5, 16)
    assert sweep.summary_names == SUMMARY_NAMES and len(SUMMARY_NAMES) == 16
    assert (
        sweep.summary_names[0] == "req_procs" and sweep.summary_names[15] == "queue_run_elapsed_s"
    )


def test_sweep_matches_hand_computed_features_with_ties():
    np.testing.assert_allclose(compute_state(TIES).summary, TIES_EXPECTED)


def test_job_starting_exactly_at_t_is_running_and_job_ending_at_t_is_gone():
    sweep = compute_state(TIES)
    # row 0 starts at 10 = submit of row 2: running, not waiting.
    assert sorted(sweep.r_members[sweep.r_ptr[2] : sweep.r_ptr[3]]) == [0, 1]
    assert sweep.wait_count[2] == 1
    # row 1 ends at 30 = submit of row 4: not running any more.
    assert sorted(sweep.r_members[sweep.r_ptr[4] : sweep.r_ptr[5]]) == [0, 2]


def test_job_submitted_same_second_on_later_row_is_not_seen():
    sweep = compute_state(TIES)
    # row 3 arrives at 10 like row 2 and starts at once; row 2 must not see it.
    assert 3 not in sweep.r_members[sweep.r_ptr[2] : sweep.r_ptr[3]]
    assert sweep.summary[2, SUMMARY_NAMES.index("queue_run_procs")] == 6


def test_unknown_wait_is_left_out_and_cancelled_job_counts_only_while_waiting():
    jobs = make_jobs(
        [
            dict(submit=0, wait=20, run=-1, procs=2, ert=100, user=1),
            dict(submit=5, wait=-1, run=10, procs=4, ert=50, user=1),
            dict(submit=10, wait=0, run=100, procs=1, ert=10, user=2),
            dict(submit=25, wait=0, run=5, procs=1, ert=10, user=2),
        ]
    )
    s = compute_state(jobs).summary
    np.testing.assert_allclose(s[2, 10:], [110, 3, 10, 0, 0, 0])
    np.testing.assert_allclose(s[3, 10:], [10, 1, 0, 10, 1, 15])
    np.testing.assert_allclose(s[3, 6:10], [1, 10, 1, 10])  # user 2 runs row 2


def test_queues_are_separate_states():
    jobs = make_jobs(
        [
            dict(submit=0, wait=100, run=10, procs=2, ert=100, user=1, queue=1),
            dict(submit=1, wait=100, run=10, procs=4, ert=50, user=1, queue=2),
            dict(submit=2, wait=0, run=10, procs=1, ert=10, user=1, queue=1),
        ]
    )
    s = compute_state(jobs).summary
    assert s[2, SUMMARY_NAMES.index("user_wait_count")] == 2  # row 0 + itself, not row 1
    assert s[2, SUMMARY_NAMES.index("queue_wait_procs")] == 3


def test_missing_requested_procs_falls_back_to_allocated():
    jobs = make_jobs([dict(submit=0, wait=0, run=10, procs=-1, alloc=6, ert=10, user=1)])
    assert compute_state(jobs).summary[0, 0] == 6


def random_trace(n: int, seed: int, queues: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.integers(0, n * 20, n)).astype(float)
    rows = [
        dict(
            submit=submit[i],
            wait=float(rng.choice([-1, 0, rng.integers(0, 300)], p=[0.05, 0.3, 0.65])),
            run=float(rng.choice([-1, 0, rng.integers(1, 500)], p=[0.05, 0.05, 0.9])),
            procs=int(rng.integers(1, 9)),
            ert=float(rng.integers(0, 1000)),
            user=int(rng.integers(1, 4)),
            queue=int(rng.integers(1, queues + 1)),
        )
        for i in range(n)
    ]
    return make_jobs(rows)


def brute_state(jobs: pd.DataFrame, i: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per-target loop over rows 0..i-1: the definition, written the slow way."""
    j = jobs.iloc[: i + 1]
    t, q, u = j.submit_time.iat[i], j.queue_id.iat[i], j.user_id.iat[i]
    procs = np.where(j.requested_procs > 0, j.requested_procs, j.allocated_procs).astype(float)
    ert = np.maximum(j.requested_time.to_numpy(), 0)
    start = (j.submit_time + j.wait_time).to_numpy()
    end = start + j.run_time.to_numpy()
    earlier = (np.arange(i + 1) < i) & (j.queue_id.to_numpy() == q) & (j.wait_time.to_numpy() >= 0)
    w = earlier & (start > t)
    w[i] = True
    r = earlier & (j.run_time.to_numpy() >= 0) & (start <= t) & (end > t)
    mine = j.user_id.to_numpy() == u
    waited = np.where(np.arange(i + 1) == i, 0.0, t - j.submit_time.to_numpy())

    def user(mask: np.ndarray) -> list[float]:
        m = mask & mine
        return [m.sum(), (procs * ert)[m].sum(), procs[m].sum(), ert[m].sum()]

    row = [procs[i], ert[i], *user(w), *user(r), ert[w].sum(), procs[w].sum(), waited[w].sum()]
    row += [ert[r].sum(), procs[r].sum(), (t - start[r]).sum()]
    values = [ert[w], procs[w], waited[w], ert[r], procs[r], t - start[r]]
    return np.array(row, dtype=float), values


def test_sweep_equals_brute_force_definition_on_random_trace():
    jobs = random_trace(150, seed=3)
    sweep = compute_state(jobs)
    for i in range(len(jobs)):
        expected, values = brute_state(jobs, i)
        np.testing.assert_allclose(sweep.summary[i], expected, err_msg=f"row {i}")
        for got, want in zip(sweep.hist_values(i), values, strict=True):
            np.testing.assert_allclose(np.sort(got), np.sort(want), err_msg=f"row {i}")


def test_fixed_histograms_equal_binning_of_the_exact_value_sets():
    jobs = random_trace(120, seed=5)
    sweep = compute_state(jobs)
    for i in range(0, 120, 7):
        expected = hg.histogram_of_values(sweep.hist_values(i), sweep.edges)
        np.testing.assert_allclose(sweep.hist[i], expected, atol=1e-6)
        assert np.allclose(sweep.hist[i, :3].sum(axis=1), 1.0)


@pytest.mark.parametrize("i", [30, 77, 100])
def test_a_request_in_a_snapshot_equals_the_sweep_row_of_a_job_removed_from_the_trace(i):
    jobs = random_trace(120, seed=7, queues=1)
    jobs = jobs[~jobs.submit_time.duplicated(keep=False)].reset_index(drop=True)
    sweep_all = compute_state(jobs)
    rest = jobs.drop(index=i).reset_index(drop=True)
    at = float(jobs.submit_time.iat[i])
    snap = from_log(rest, at, machine_procs=64)
    single = state_features(snap, RequestBatch.from_jobs(jobs.iloc[[i]]))
    np.testing.assert_allclose(single.summary[0], sweep_all.summary[i])
    for got, want in zip(single.values(0), sweep_all.hist_values(i), strict=True):
        np.testing.assert_allclose(np.sort(got), np.sort(want))
    np.testing.assert_allclose(single.hist[0], sweep_all.hist[i], atol=1e-6)
    assert snap.arrived_rows(rest.submit_time.to_numpy()) == i


def test_sweep_rejects_unsorted_jobs():
    with pytest.raises(ValueError, match="sorted"):
        compute_state(TIES.iloc[::-1].reset_index(drop=True))


def test_membership_lists_do_not_depend_on_the_chunk_size():
    a = st.job_arrays(random_trace(200, seed=9))
    _, wait_count, run_count = st.summaries(a)
    for intervals, counts in (
        (st.wait_intervals(a), wait_count - 1),
        (st.run_intervals(a), run_count),
    ):
        big = st.membership(a.queue, *intervals, counts)
        small = st.membership(a.queue, *intervals, counts, chunk=7)
        np.testing.assert_array_equal(big[0], small[0])
        np.testing.assert_array_equal(big[1], small[1])
        assert len(big[1]) > 0


def test_fixed_histograms_do_not_depend_on_the_chunk_budget():
    sweep = compute_state(random_trace(200, seed=4))
    a = sweep.arrays
    args = (a, sweep.w_ptr, sweep.w_members, sweep.r_ptr, sweep.r_members, sweep.edges)
    np.testing.assert_array_equal(hg.fixed_histograms(*args, budget=50), sweep.hist)
