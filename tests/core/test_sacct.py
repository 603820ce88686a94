"""sacct --parsable2 output: the fields read, steps and never-run jobs counted, strict/lenient."""

from __future__ import annotations

import datetime as dt

import pytest

from holdqueue.core.sacct import SacctFormatError, parse_time_limit, read_sacct

HEADER = "JobID|User|Group|Partition|Submit|Start|End|State|AllocCPUS|Timelimit"
T = "2026-12-01T"
ROWS = [
    f"12|ann|staff|batch|{T}01:00:00|{T}01:00:30|{T}01:10:30|COMPLETED|16|00:20:00",
    f"12.batch|ann|staff|batch|{T}01:00:30|{T}01:00:30|{T}01:10:30|COMPLETED|16|",
    f"11|bob|staff|batch|{T}00:59:00|{T}01:00:00|{T}01:00:05|CANCELLED by 0|4|1-00:00:00",
    f"13|bob|staff|batch|{T}01:02:00|None|{T}01:03:00|CANCELLED by 0|4|UNLIMITED",
    f"14|cy|staff|batch|{T}01:04:00|{T}01:05:00|Unknown|RUNNING|2|05:00",
]


def test_finished_jobs_are_read_with_waits_runtimes_and_limits() -> None:
    frame, report = read_sacct([HEADER, *ROWS])
    assert frame["job_key"].tolist() == ["11", "12"]  # by submit time
    assert frame["wait_s"].tolist() == [60.0, 30.0]
    assert frame["run_s"].tolist() == [5.0, 600.0]
    assert frame["req_time_s"].tolist() == [86400.0, 1200.0]
    assert frame["status"].tolist() == [5, 1]
    assert frame["procs"].tolist() == [4, 16]
    start = dt.datetime(2026, 12, 1, 0, 59, tzinfo=dt.UTC).timestamp()
    assert frame["submit_ts"].iloc[0] == start
    assert (report.jobs, report.steps_skipped, report.never_ran) == (2, 1, 2)


def test_time_zone_of_the_sacct_machine_shifts_the_times() -> None:
    utc, _ = read_sacct([HEADER, ROWS[0]])
    plus2, _ = read_sacct([HEADER, ROWS[0]], tz=dt.timezone(dt.timedelta(hours=2)))
    assert utc["submit_ts"].iloc[0] - plus2["submit_ts"].iloc[0] == 7200.0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("05:00", 300.0),
        ("01:02:03", 3723.0),
        ("2-00:00:01", 172801.0),
        ("UNLIMITED", -1.0),
        ("Partition_Limit", -1.0),
    ],
)
def test_time_limits(text: str, seconds: float) -> None:
    assert parse_time_limit(text) == seconds


def test_header_without_a_needed_column_is_rejected_naming_it() -> None:
    with pytest.raises(SacctFormatError, match="line 1: the header lacks Timelimit"):
        read_sacct(["JobID|User|Submit|Start|End|State|AllocCPUS", "1|a|x|y|z|COMPLETED|1"])


def test_strict_mode_stops_at_a_bad_row_naming_line_column_and_value() -> None:
    bad = ROWS[0].replace("|16|", "|sixteen|")
    with pytest.raises(SacctFormatError, match=r"line 3, column AllocCPUS.*'sixteen'"):
        read_sacct([HEADER, ROWS[2], bad])


def test_lenient_mode_skips_bad_rows_and_reports_each() -> None:
    bad_time = ROWS[0].replace("2026-12-01T01:00:30|2026", "yesterday|2026", 1)
    short = "15|ann|staff"
    frame, report = read_sacct([HEADER, bad_time, short, ROWS[2]], lenient=True)
    assert frame["job_key"].tolist() == ["11"]
    assert len(report.skipped) == 2
    assert "line 2, column Start" in report.skipped[0]
    assert "line 3: 3 columns, the header has 10" in report.skipped[1]


def test_empty_input_is_an_error() -> None:
    with pytest.raises(SacctFormatError, match="empty input"):
        read_sacct([])
