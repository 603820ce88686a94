"""Molding core: the gain-function score, candidate sizes and the choice, worked by hand."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from jobmolding.core.candidates import candidate_sizes, grid_sizes
from jobmolding.core.choice import choose_size, response_ranges
from jobmolding.core.score import point_prediction, rangeset_score, score_candidates


def rs(low, high, prob):
    return SimpleNamespace(
        low_s=np.asarray(low, float),
        high_s=np.asarray(high, float),
        probability=np.asarray(prob, float),
    )


def test_score_of_one_range_is_one_minus_its_normalised_middle() -> None:
    # [0, 10] on a scale of 10: integral of (1 - t) over [0, 1] = 0.5, covered length 1
    assert rangeset_score([0.0], [10.0], [1.0], 10.0) == pytest.approx(0.5)


def test_scores_share_the_largest_upper_bound_as_scale() -> None:
    # scale 40. A = [0.25, 0.5]: 0.25 * (1 - 0.375) / 0.25 = 0.625; B = [0.75, 1]: 0.125
    scores = score_candidates([np.array([10.0]), np.array([30.0])],
                              [np.array([20.0]), np.array([40.0])],
                              [np.array([1.0]), np.array([1.0])])  # fmt: skip
    assert scores == pytest.approx([0.625, 0.125])


def test_score_weights_ranges_by_probability_and_divides_by_covered_length() -> None:
    # [0, 0.25] p=.5: .25 * .875 = .21875; [0.5, 1] p=.5: .5 * .25 = .125
    # (.5 * .21875 + .5 * .125) / (.25 + .5) = .171875 / .75
    score = rangeset_score([0.0, 20.0], [10.0, 40.0], [0.5, 0.5], 40.0)
    assert score == pytest.approx(0.171875 / 0.75)


def test_point_ranges_score_as_the_limit_of_equal_widths() -> None:
    assert rangeset_score([10.0], [10.0], [1.0], 40.0) == pytest.approx(0.75)
    assert rangeset_score([10.0, 30.0], [10.0, 30.0], [0.5, 0.5], 40.0) == pytest.approx(
        (0.5 * 0.75 + 0.5 * 0.25) / 2
    )


def test_point_prediction_is_the_probability_weighted_sum_of_medians() -> None:
    assert point_prediction([0.0, 100.0], [10.0, 300.0], [0.25, 0.75]) == pytest.approx(
        0.25 * 5 + 0.75 * 200
    )


def test_response_rangeset_shifts_runtime_ranges_by_the_wait() -> None:
    low, high, prob = response_ranges(50.0, rs([10, 30], [20, 40], [0.4, 0.6]))
    assert low.tolist() == [60, 80] and high.tolist() == [70, 90] and prob.tolist() == [0.4, 0.6]


def test_choice_takes_the_smaller_size_that_skips_a_long_wait() -> None:
    # 8 procs: wait 1000 + [100, 200] -> [1100, 1200]; 4 procs: wait 0 + [200, 400].
    # scale 1200: 4 -> 1 - (1/6 + 1/3)/2 = .75; 8 -> 1 - (11/12 + 1)/2 = 1/24
    d = choose_size(8, [4, 8], [0.0, 1000.0], [rs([200], [400], [1]), rs([100], [200], [1])])
    assert d.chosen_procs == 4 and d.molded
    assert d.score == pytest.approx([0.75, 1 / 24])
    assert d.response_s == pytest.approx([300.0, 1150.0])
    record = d.as_dict()
    assert record["chosen_procs"] == 4 and len(record["candidates"]) == 2
    assert record["candidates"][1]["wait_s"] == 1000.0 and "scores" in record["reason"]


def test_ties_go_to_the_original_size_then_the_smaller() -> None:
    same = rs([100], [200], [1])
    d = choose_size(4, [2, 4, 8], [0.0, 0.0, 0.0], [same, same, same])
    assert d.chosen_procs == 4 and not d.molded
    d = choose_size(16, [2, 8, 16], [0.0, 0.0, 500.0], [same, same, same])
    assert d.chosen_procs == 2


def test_choice_rejects_misaligned_inputs() -> None:
    with pytest.raises(ValueError, match="as many waits"):
        choose_size(4, [2, 4], [0.0], [rs([1], [2], [1])])


def test_candidates_are_used_sizes_and_the_original_within_the_machine() -> None:
    assert candidate_sizes(16, [4, 8, 8, 256, 0], 128).tolist() == [4, 8, 16]
    assert candidate_sizes(300, [4], 128).tolist() == [4, 128]


def test_users_without_history_get_the_original_or_a_grid() -> None:
    assert candidate_sizes(6, [], 64).tolist() == [6]
    assert candidate_sizes(6, [], 64, grid="pow2").tolist() == [1, 2, 4, 6, 8, 16, 32, 64]
    assert grid_sizes(6, 64, "range", grid_factor=2.0).tolist() == [3, 4, 6, 8, 12]
    with pytest.raises(ValueError, match="grid must be one of"):
        grid_sizes(6, 64, "cube")


def test_snapshot_sizes_are_the_users_finished_running_and_waiting_jobs_sizes() -> None:
    """One rule for replay and live site: finished history rows (run_time >= 0) and the user's
    active jobs, each at the size it went to the batch system; other users and the
    unfinished history rows (a replay's, already counted as active) add nothing."""
    import pandas as pd

    from jobmolding.core.candidates import live_candidate_sizes, snapshot_sizes
    from predictor.core.state.request import JobRequest, RequestBatch
    from predictor.core.state.snapshot import ActiveJobs, Snapshot

    def batch(*jobs: tuple[int, int]) -> RequestBatch:
        return RequestBatch.of(
            [JobRequest(user=u, procs=p, req_time_s=60.0, submit_s=0.0) for u, p in jobs]
        )

    history = pd.DataFrame(
        {
            "user_id": [7, 7, 8, 7, 7],
            "requested_procs": [4, 32, 64, 2, -1],  # -1: the log gives no request (CTC-SP2)
            "allocated_procs": [4, 32, 64, 2, 8],
            "run_time": [100.0, -1.0, 50.0, 10.0, 5.0],  # the 32 is still running: -1
        }
    )
    snap = Snapshot(
        time_s=0.0, known_at_s=0.0,
        waiting=ActiveJobs(batch((7, 16), (8, 1)), np.full(2, np.inf), np.array([16, 1])),
        running=ActiveJobs(batch((7, 32)), np.array([-5.0]), np.array([32])),
        history=history, machine_procs=64,
    )  # fmt: skip
    assert snapshot_sizes(snap, 7).tolist() == [2, 4, 8, 16, 32]
    assert snapshot_sizes(snap, 8).tolist() == [1, 64]
    assert snapshot_sizes(snap, 9).tolist() == []
    # a user with a job in the snapshot gets its sizes; one with none the grid around the ask
    assert live_candidate_sizes(3, snapshot_sizes(snap, 7), 64).tolist() == [2, 3, 4, 8, 16, 32]
    assert live_candidate_sizes(3, snapshot_sizes(snap, 9), 64).tolist() == [1, 2, 3, 4, 6, 8]
    assert live_candidate_sizes(6, snapshot_sizes(snap, 9), 64).tolist() == [2, 3, 4, 6, 8, 12, 16]


def test_a_replay_offers_newcomers_the_live_sites_grid_except_under_the_seeds_model() -> None:
    from jobmolding.core.candidates import NEWCOMER_GRID
    from jobmolding.core.policy import MoldingParams

    assert MoldingParams(runtime_model="downey").grid == NEWCOMER_GRID
    assert MoldingParams(runtime_model="downey", grid="none").grid == "none"
    assert MoldingParams(runtime_model="paper").grid == "none"
    with pytest.raises(ValueError, match="under the paper model"):
        MoldingParams(runtime_model="paper", grid="range")
