"""The molding run's report of the sizes tried (``jobmolding.core.tried``)."""

from __future__ import annotations

from jobmolding.core.tried import candidates_tried


def test_summary_counts_sizes_and_decisions_without_a_choice() -> None:
    decisions = {
        3: {"molded": False, "candidates": [16]},  # a user without history: nothing to choose
        4: {"molded": True, "candidates": [4, 16]},
        5: {"molded": True, "candidates": [4, 8, 16]},
        6: {"molded": False},  # recorded before sizes were kept: left out
    }
    assert candidates_tried(decisions) == {
        "decisions": 3,
        "only_original": 1,
        "mean_candidates": 2.0,
        "max_candidates": 3,
        "sizes": [
            {"procs": 4, "decisions": 2},
            {"procs": 8, "decisions": 1},
            {"procs": 16, "decisions": 3},
        ],
    }


def test_no_decision_gives_an_empty_summary() -> None:
    assert candidates_tried({})["decisions"] == 0
    assert candidates_tried({})["sizes"] == []
