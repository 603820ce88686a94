"""Delayed submission: the future time with the 5% rule and the 30% threshold, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from jobmolding.core.delay import decide_delay, future_time


def test_future_time_is_the_earliest_predicted_completion() -> None:
    assert future_time(0.0, np.array([300.0, 100.0, 200.0])) == 100.0


def test_completions_within_five_percent_after_t_move_t_along() -> None:
    # t = 100; 104 - 100 = 4 <= 5 -> t = 104; 108.9 - 104 = 4.9 <= 5.2 -> 108.9; 200 is far
    assert future_time(0.0, np.array([100.0, 104.0, 108.9, 200.0])) == pytest.approx(108.9)
    # the window grows with t: 110.2 - 105 = 5.2 <= 0.05 * 105 = 5.25
    assert future_time(0.0, np.array([100.0, 105.0, 110.2])) == pytest.approx(110.2)
    assert future_time(0.0, np.array([100.0, 105.0, 110.3])) == pytest.approx(105.0)


def test_the_five_percent_is_of_the_time_from_now_and_past_ends_are_ignored() -> None:
    # now = 1000: t = 1100 and the window is 5% of 100 s, not of 1100 s
    assert future_time(1000.0, np.array([900.0, 1100.0, 1104.0, 1110.0])) == 1104.0
    assert future_time(1000.0, np.array([900.0, 1000.0])) is None
    assert future_time(0.0, np.array([100.0, 104.0]), merge_fraction=0.0) == 100.0


def test_delay_only_when_it_beats_now_by_more_than_thirty_percent() -> None:
    # bar = 0.7 x 1000 = 700. Delay 100 + 599 = 699 < 700: delay; 100 + 600 = 700: no
    yes = decide_delay(0.0, 100.0, 8, 1000.0, 4, 599.0)
    no = decide_delay(0.0, 100.0, 8, 1000.0, 4, 600.0)
    assert yes.delay and yes.release_s == 100.0 and yes.procs == 4
    assert yes.delayed_response_s == pytest.approx(699.0)
    assert not no.delay and no.release_s == 0.0 and no.procs == 8
    assert "700" in no.reason and no.as_dict()["delay_s"] == 100.0


def test_threshold_is_a_parameter_and_no_future_means_no_delay() -> None:
    assert decide_delay(0.0, 100.0, 8, 1000.0, 8, 850.0, threshold=0.0).delay
    assert not decide_delay(0.0, None, 8, 1000.0, 8, float("nan")).delay
    # threshold 1 (a guard of 1): nothing can beat (1 - 1) x now = 0, never a delay
    assert not decide_delay(0.0, 100.0, 8, 1000.0, 8, 0.0, threshold=1.0).delay
    with pytest.raises(ValueError, match="threshold"):
        decide_delay(0.0, 100.0, 8, 1000.0, 8, 10.0, threshold=1.5)
