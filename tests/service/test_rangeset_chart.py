"""The predict page's runtime: the rangeSet's median, its table and its time-axis chart."""

from __future__ import annotations

import pytest

from predictor.pages.rangeset import median_runtime_s, ranges_table, rangeset_chart

# Two clusters far apart (the demo trace's answer for 16 processors, 2 h, in short): the
# rangeSet's own point, sum p (low + high) / 2, falls in the gap between them.
GAP = [
    {"low_s": 3.0, "high_s": 514.0, "probability": 0.69},
    {"low_s": 4800.0, "high_s": 7200.0, "probability": 0.31},
]


def point_of(ranges: list[dict]) -> float:
    return sum(r["probability"] * (r["low_s"] + r["high_s"]) / 2 for r in ranges)


def test_the_median_lies_in_a_range_where_the_weighted_point_falls_in_the_gap() -> None:
    assert 514.0 < point_of(GAP) < 4800.0  # the API's point_s: where no runtime is expected
    median = median_runtime_s(GAP)
    # half of 0.69 spread evenly over [3, 514]: 3 + (0.5 / 0.69) * 511
    assert median == pytest.approx(3.0 + 0.5 / 0.69 * 511.0)
    rows = ranges_table(GAP, median)
    assert [r["median"] for r in rows] == [True, False]
    assert [r["finished_by"] for r in rows] == pytest.approx([0.69, 1.0])


def test_the_median_of_unsorted_and_point_ranges() -> None:
    ranges = [
        {"low_s": 100.0, "high_s": 200.0, "probability": 0.3},
        {"low_s": 60.0, "high_s": 60.0, "probability": 0.4},  # one instant
        {"low_s": 10.0, "high_s": 20.0, "probability": 0.3},
    ]
    assert median_runtime_s(ranges) == 60.0  # 0.3 below it, 0.4 at it
    assert median_runtime_s([]) is None


def test_a_median_on_a_shared_edge_marks_one_row() -> None:
    touching = [
        {"low_s": 10.0, "high_s": 20.0, "probability": 0.5},
        {"low_s": 20.0, "high_s": 40.0, "probability": 0.5},
    ]
    assert median_runtime_s(touching) == 20.0
    assert [r["median"] for r in ranges_table(touching, 20.0)] == [True, False]


def test_the_chart_is_on_a_time_axis_with_the_median_and_the_limit() -> None:
    median = median_runtime_s(GAP)
    spec = rangeset_chart(GAP, median, 7200.0)
    boxes, curve, marker, limit = spec["data"]["datasets"]
    assert spec["options"]["scales"]["x"]["type"] == "logarithmic"  # 3 s to 2 h
    assert spec["qc"]["durationAxes"] == ["x"] and spec["qc"]["percentAxes"] == ["y"]
    assert [p["x"] for p in boxes["data"]] == [3.0, 3.0, 514.0, 514.0, 4800.0, 4800.0, 7200.0,
                                               7200.0]  # fmt: skip
    assert [p["y"] for p in boxes["data"]] == [0.0, 0.69, 0.69, 0.0, 0.0, 0.31, 0.31, 0.0]
    # P(finished by t) is flat across the gap: 0.69 at both its ends
    flat = [p for p in curve["data"] if p["x"] in (514.0, 4800.0)]
    assert [p["y"] for p in flat] == pytest.approx([0.69, 0.69])
    assert marker["data"] == [{"x": median, "y": 0.0}, {"x": median, "y": 1.0}]
    assert marker["label"] == "median runtime 6 min 13 s"
    assert limit["label"] == "time limit 2 h"


def test_a_narrow_answer_gets_a_linear_axis() -> None:
    narrow = [{"low_s": 3000.0, "high_s": 3600.0, "probability": 1.0}]
    spec = rangeset_chart(narrow, median_runtime_s(narrow), 7200.0)
    assert spec["options"]["scales"]["x"]["type"] == "linear"
    assert spec["data"]["datasets"][2]["data"][0]["x"] == 3300.0
