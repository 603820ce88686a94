"""Durations as people read them, and the duration forms the predict page accepts."""

from __future__ import annotations

import math

import pytest

from queuecast.humanize import duration, parse_duration, percent, relative, trace_datetime


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"), (0.04, "0 s"), (1.82, "1.8 s"), (2.0, "2 s"), (9.97, "10 s"), (45, "45 s"),
        (59.6, "1 min"), (61, "1 min 1 s"), (3600, "1 h"),
        (7800, "2 h 10 min"), (7830, "2 h 11 min"), (90000, "1 d 1 h"),
        (400000, "4 d 15 h"), (4e7, "1 y 98 d"), (-60, "-1 min"),
    ],
)  # fmt: skip
def test_duration_shows_the_two_largest_units_rounded(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_duration_of_nothing_is_a_dash() -> None:
    assert duration(None) == "–" and duration(math.nan) == "–"


def test_relative_says_in_ago_or_now() -> None:
    assert (relative(7800), relative(-120), relative(0.2)) == ("in 2 h 10 min", "2 min ago", "now")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5400", 5400), ("1:30", 5400), ("1:30:00", 5400), ("2h 30min", 9000), ("90 min", 5400),
     ("1.5h", 5400), ("2 days", 172800)],
)  # fmt: skip
def test_parse_duration_accepts_the_documented_forms(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "2 weeks", "1:2:3:4", "h", ""])
def test_parse_duration_rejects_other_text_naming_the_forms(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


def test_trace_datetime_needs_the_header_start() -> None:
    assert trace_datetime({}, 10) is None
    when = trace_datetime({"unix_start_time": 0}, 90061)
    assert when is not None and when.isoformat() == "1970-01-02T01:01:01+00:00"


def test_percent() -> None:
    assert (percent(0.734), percent(0.7346, 1), percent(None)) == ("73%", "73.5%", "–")
