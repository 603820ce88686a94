"""The SWF reader's hardening: exactly 18 fields, ranges, and limits enforced while streaming."""

from __future__ import annotations

import gzip
import io

import pytest

from traces.core.swf import SwfFormatError, SwfLimitError, SwfLimits, read_swf

GOOD = "1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1"


def job(number: int, **fields: str) -> str:
    tokens = GOOD.split()
    tokens[0] = str(number)
    names = {"run_time": 3, "allocated_procs": 4, "user_id": 11, "job_id": 0, "requested_time": 8}
    for name, value in fields.items():
        tokens[names[name]] = value
    return " ".join(tokens)


def stream(lines: list[str], header: str = "; Version: 2.2\n") -> io.BytesIO:
    return io.BytesIO((header + "\n".join(lines) + "\n").encode())


@pytest.mark.parametrize("extra", [1, 2])
def test_strict_rejects_a_file_whose_lines_all_have_more_than_18_fields(extra: int) -> None:
    lines = [job(n) + " 7" * extra for n in range(1, 6)]  # every line alike: no ragged rows
    with pytest.raises(SwfFormatError, match=f"line 2.*expected 18 fields, found {18 + extra}"):
        read_swf(stream(lines))


def test_lenient_skips_and_reports_lines_with_19_fields() -> None:
    lines = [job(n) + " 7" for n in range(1, 5)] + [job(9)]
    trace = read_swf(stream(lines), strict=False)
    assert trace.jobs["job_id"].tolist() == [9]
    assert trace.report.skipped_lines == 4
    assert trace.report.skipped_examples[0]["reason"] == "expected 18 fields, found 19"


def test_one_line_of_a_million_fields_is_refused_by_the_line_cap() -> None:
    lines = [job(1), " ".join(["1"] * 1_000_000)]
    with pytest.raises(SwfLimitError, match="line 3: line longer than 4096 bytes"):
        read_swf(stream(lines))


def test_a_huge_header_comment_is_refused_not_stored() -> None:
    header = "; Note: " + "x" * 10_000_000 + "\n"
    with pytest.raises(SwfLimitError, match="line 1: line longer than"):
        read_swf(stream([job(1)], header=header))
    many = "".join(f"; Note: {'y' * 1000}\n" for _ in range(100))
    with pytest.raises(SwfLimitError, match="header comments longer than 65536 bytes"):
        read_swf(stream([job(1)], header=many))


def test_a_gzip_bomb_stops_at_the_decompressed_byte_limit() -> None:
    body = ("\n".join(job(n) for n in range(1, 200_001)) + "\n").encode()  # ~10 MB
    bomb = gzip.compress(body, compresslevel=9)
    assert len(bomb) < len(body) / 5
    limits = SwfLimits(max_bytes=2**20)
    with pytest.raises(SwfLimitError, match=f"more than {2**20} bytes of SWF text"):
        read_swf(io.BytesIO(bomb), limits=limits)


@pytest.mark.parametrize("strict", [True, False])
def test_the_job_limit_is_enforced_while_reading(strict: bool) -> None:
    lines = [job(n) for n in range(1, 101)]
    if not strict:
        lines.append("not a job line")  # lenient: the line-by-line path counts too
    with pytest.raises(SwfLimitError, match="more than 10 jobs"):
        read_swf(stream(lines), strict=strict, limits=SwfLimits(max_jobs=10))


def test_the_line_limit_is_enforced_while_reading() -> None:
    with pytest.raises(SwfLimitError, match="more than 50 lines"):
        read_swf(stream([job(n) for n in range(1, 101)]), limits=SwfLimits(max_lines=50))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("allocated_procs", str(2**31)),  # past a 32-bit column: PostgreSQL errors, SQLite wraps
        ("user_id", "1e19"),  # past int64: the cast wrapped it silently before
        ("job_id", str(2**60)),  # past 2**53: no longer exact in float64
        ("run_time", "1e11"),  # 3,000 years
    ],
)
def test_values_out_of_their_fields_range_are_rejected_naming_the_field(field, value) -> None:
    lines = [job(1), job(2, **{field: value}), job(3)]
    with pytest.raises(SwfFormatError, match="out of range") as caught:
        read_swf(stream(lines))
    assert (caught.value.line, caught.value.field, caught.value.value) == (3, field, value)
    lenient = read_swf(stream(lines), strict=False)
    assert lenient.jobs["job_id"].tolist() == [1, 3] and lenient.report.skipped_lines == 1


def test_a_trace_spanning_longer_than_the_limit_is_rejected() -> None:
    lines = [job(1), job(2, run_time=str(int(30 * 365.25 * 86400)))]  # 30 years
    with pytest.raises(SwfFormatError, match="spans 10958 days .*job 2 ends last.*7305 days"):
        read_swf(stream(lines))


def test_a_requested_time_over_its_limit_names_the_field_and_its_setting() -> None:
    asks = [job(1), job(2, requested_time=str(30 * 365 * 86400))]
    with pytest.raises(SwfFormatError, match="job 2 requests 10950 days") as err:
        read_swf(stream(asks))
    assert err.value.field == "requested_time"
    assert "QUEUECAST_MAX_REQUESTED_DAYS" in str(err.value)
    assert "QUEUECAST_MAX_SPAN_DAYS" not in str(err.value)


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("sentinel", [2**31 - 1, 2**32 - 1])
def test_an_unlimited_requested_time_is_stored_as_unknown_and_counted(
    strict: bool, sentinel: int
) -> None:
    lines = [job(1), job(2, requested_time=str(sentinel)), job(3, requested_time=str(sentinel))]
    trace = read_swf(stream(lines), strict=strict)
    assert trace.jobs["requested_time"].tolist() == [200, -1, -1]
    assert trace.report.oddities["unlimited_requested_time"] == 2
    assert any("'unlimited' requested_time" in w for w in trace.report.warnings)


def test_an_unlimited_value_is_stored_as_unknown_on_the_line_by_line_path_too() -> None:
    lines = [job(1, requested_time=str(2**31 - 1)), job(2) + " 7"]  # 19 fields: slow path
    trace = read_swf(stream(lines), strict=False)
    assert trace.jobs["requested_time"].tolist() == [-1]
    assert trace.report.oddities["unlimited_requested_time"] == 1


def test_an_unlimited_id_is_not_an_unknown() -> None:
    trace = read_swf(stream([job(1, user_id=str(2**31 - 1))]))
    assert trace.jobs["user_id"].tolist() == [2**31 - 1]
    assert "unlimited_user_id" not in trace.report.oddities


def test_values_at_the_edges_of_their_ranges_are_read_exactly() -> None:
    lines = [job(1, allocated_procs=str(2**31 - 1)), job(2**53 - 1, user_id=str(-(2**31)))]
    jobs = read_swf(stream(lines)).jobs
    assert jobs["allocated_procs"].tolist()[0] == 2**31 - 1
    assert jobs["job_id"].tolist()[1] == 2**53 - 1 and jobs["user_id"].tolist()[1] == -(2**31)


def test_an_integer_that_would_round_into_range_is_still_rejected() -> None:
    with pytest.raises(SwfFormatError, match="out of range"):  # reads as the float -2**53
        read_swf(stream([job(1), job(2, job_id=str(-(2**53) - 1))]))
