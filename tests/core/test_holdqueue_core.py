"""Hold-queue semantics: the held head, FCFS followers, release with the original spacing."""

from __future__ import annotations

import numpy as np
import pytest

from jobmolding.core.hold import HoldQueue, joins_hold, release_times, shifted_release


def test_followers_keep_their_spacing_behind_the_released_head() -> None:
    # head arrives at 100, held until 500: followers at 150 and 300 go at 550 and 700
    assert release_times(100.0, 500.0, np.array([150.0, 300.0])).tolist() == [550.0, 700.0]


def test_only_arrivals_during_the_hold_join_it() -> None:
    assert joins_hold(100.0, 100.0, 500.0) and joins_hold(499.0, 100.0, 500.0)
    assert not joins_hold(500.0, 100.0, 500.0) and not joins_hold(99.0, 100.0, 500.0)


def test_hold_queue_releases_head_then_followers_fcfs() -> None:
    q = HoldQueue()
    q.hold("head", 100.0, 500.0)
    assert q.holding(150.0)
    q.admit("a", 150.0)
    q.admit("b", 300.0)
    with pytest.raises(ValueError, match="queue behind"):
        q.hold("c", 320.0, 900.0)
    assert q.due(499.0) == [] and q.next_release_s() == 500.0
    assert [h.job for h in q.due(550.0)] == ["head", "a"]
    assert not q.holding(550.0)
    q.hold("d", 600.0, 650.0)  # a new hold may start once the old one is released
    assert [h.job for h in q.due(700.0)] == ["b", "d"]
    assert len(q) == 0


def test_admit_without_a_hold_and_release_before_arrival_are_refused() -> None:
    q = HoldQueue()
    with pytest.raises(ValueError, match="nothing to queue behind"):
        q.admit("a", 10.0)
    with pytest.raises(ValueError, match="not after the arrival"):
        q.hold("a", 10.0, 10.0)


def test_early_release_moves_the_block_but_never_before_a_follower_arrived() -> None:
    # head released at 300 instead of 500: a follower due at 700 (arrived 300) goes at 500
    assert shifted_release(700.0, 500.0, 300.0, 300.0) == 500.0
    assert shifted_release(550.0, 500.0, 100.0, 150.0) == 150.0
