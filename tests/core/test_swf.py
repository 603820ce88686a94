"""The SWF reader and writer on hand-made snippets (no database)."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

from traces.core.swf import SWF_FIELDS, SwfFormatError, read_swf, write_swf

HEADER = """; Version: 2.2
; Computer: Test machine
; Installation: nowhere
; MaxJobs: 4
; MaxRecords: 4
; UnixStartTime: 1000000000
; TimeZoneString: Europe/Stockholm
; MaxNodes: 64
; MaxProcs: 1664 (72, 1368, 224)
; MaxRuntime: 86400
; Queues: 1 = batch
;         continued queue text
; Note: first note
; Note: second note
"""
JOBS = [
    "1 0 10 100 4 90.5 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
    "2 5 0 50 1 -1 -1 1 60 -1 1 4 1 -1 1 -1 -1 -1",
    "3 7 -1 -1 0 -1 -1 2 -1 -1 5 3 1 -1 1 -1 -1 -1",
    "4 9 3 12.25 8 -1 -1 8 100 -1 1 -2 1 -1 1 -1 -1 -1",
]


def swf(lines: list[str], header: str = HEADER) -> io.BytesIO:
    return io.BytesIO((header + "\n".join(lines) + "\n").encode())


def test_parser_reads_header_fields_typed() -> None:
    trace = read_swf(swf(JOBS))
    h = trace.header
    assert (h.version, h.computer, h.max_jobs, h.unix_start_time) == (
        "2.2",
        "Test machine",
        4,
        1000000000,
    )
    assert h.time_zone_string == "Europe/Stockholm"
    assert h.max_procs == 1664 and h.composite["MaxProcs"].startswith("1664 (72")
    assert h.queues == ["1 = batch continued queue text"]
    assert h.notes == ["first note", "second note"]
    assert trace.machine_procs == 1664


def test_parser_returns_18_typed_columns_with_minus_one_kept() -> None:
    jobs = read_swf(swf(JOBS)).jobs
    assert tuple(jobs.columns) == SWF_FIELDS
    assert jobs["job_id"].dtype == np.int64 and jobs["run_time"].dtype == np.float64
    assert jobs.loc[3, "run_time"] == 12.25 and jobs.loc[0, "avg_cpu_time"] == 90.5
    assert jobs.loc[2, "wait_time"] == -1 and jobs.loc[2, "requested_time"] == -1


def test_parser_counts_oddities_without_dropping_jobs() -> None:
    trace = read_swf(swf(JOBS))
    odd = trace.report.oddities
    assert len(trace.jobs) == 4
    assert odd["missing_run_time"] == 1 and odd["missing_wait_time"] == 1
    assert odd["zero_allocated_procs"] == 1
    assert odd["below_minus_one_user_id"] == 1
    assert odd["composite_MaxProcs"] == 1


def test_parser_sorts_out_of_order_submits_with_a_warning() -> None:
    lines = [JOBS[1], JOBS[0], JOBS[3], JOBS[2]]
    trace = read_swf(swf(lines))
    assert trace.jobs["job_id"].tolist() == [1, 2, 3, 4]
    assert trace.report.oddities["submit_out_of_order"] == 2
    assert "sorted" in trace.report.warnings[0]


def test_parser_accepts_header_without_version() -> None:
    trace = read_swf(swf(JOBS, header="; MaxProcs: 8\n"))
    assert trace.header.version is None
    assert trace.report.oddities["header_without_version"] == 1


@pytest.mark.parametrize("n_fields", [17, 19])
def test_parser_rejects_line_with_wrong_field_count(n_fields: int) -> None:
    bad = " ".join(["7"] * n_fields)
    with pytest.raises(SwfFormatError) as err:
        read_swf(swf(JOBS[:2] + [bad] + JOBS[2:]), name="x.swf")
    assert err.value.line == HEADER.count("\n") + 3
    assert f"found {n_fields}" in str(err.value) and "x.swf" in str(err.value)


def test_parser_rejects_non_number_naming_field_and_value() -> None:
    bad = JOBS[1].replace(" 60 ", " 6O ")
    with pytest.raises(SwfFormatError) as err:
        read_swf(swf([JOBS[0], bad]))
    assert (err.value.field, err.value.value) == ("requested_time", "6O")
    assert err.value.line == HEADER.count("\n") + 2


def test_parser_rejects_duplicate_job_number() -> None:
    with pytest.raises(SwfFormatError) as err:
        read_swf(swf([JOBS[0], JOBS[1], JOBS[1]]))
    assert err.value.field == "job_id" and "duplicate" in str(err.value)


def test_lenient_mode_skips_bad_lines_and_reports_them() -> None:
    lines = [JOBS[0], "1 2 3", JOBS[1], JOBS[1], JOBS[2].replace(" 5 ", " x ")]
    trace = read_swf(swf(lines), strict=False)
    assert trace.jobs["job_id"].tolist() == [1, 2]
    report = trace.report
    assert report.skipped_lines == 3
    assert [e["line"] for e in report.skipped_examples] == [
        HEADER.count("\n") + i for i in (2, 4, 5)
    ]


def test_parser_rejects_empty_binary_and_truncated_gzip() -> None:
    with pytest.raises(SwfFormatError, match="empty"):
        read_swf(io.BytesIO(b""))
    with pytest.raises(SwfFormatError, match="binary"):
        read_swf(io.BytesIO(bytes(range(256)) * 10))
    data = gzip.compress((HEADER + "\n".join(JOBS * 1) + "\n").encode() * 50)
    with pytest.raises(SwfFormatError, match="gzip"):
        read_swf(io.BytesIO(data[: len(data) // 2]))


def test_parser_rejects_comments_only() -> None:
    with pytest.raises(SwfFormatError, match="no job lines"):
        read_swf(swf([]))


def test_gzip_and_plain_give_the_same_trace(tmp_path) -> None:
    text = (HEADER + "\n".join(JOBS) + "\n").encode()
    plain, packed = tmp_path / "a.swf", tmp_path / "a.swf.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    a, b = read_swf(plain), read_swf(packed)
    assert a.jobs.equals(b.jobs) and a.header == b.header


def test_writer_round_trips_header_and_jobs(tmp_path) -> None:
    first = read_swf(swf(JOBS))
    out = tmp_path / "out.swf.gz"
    write_swf(first, out)
    second = read_swf(out)
    assert second.header == first.header
    assert second.jobs.equals(first.jobs)


def test_writer_keeps_decimals_and_writes_integers_plainly() -> None:
    buf = io.StringIO()
    write_swf(read_swf(swf(JOBS)), buf)
    body = [line for line in buf.getvalue().splitlines() if not line.startswith(";")]
    assert body[0].split()[:6] == ["1", "0", "10", "100", "4", "90.5"]
    assert body[3].split()[3] == "12.25"


def test_unseekable_stream_is_read(tmp_path) -> None:
    class Pipe(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self._buf = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:
            chunk = self._buf.read(len(b))
            b[: len(chunk)] = chunk
            return len(chunk)

        def seekable(self) -> bool:
            return False

        def seek(self, *a):
            raise io.UnsupportedOperation("pipe")

        def tell(self) -> int:
            raise io.UnsupportedOperation("pipe")

    data = (HEADER + "\n".join(JOBS) + "\n").encode()
    trace = read_swf(Pipe(data), strict=False)
    assert len(trace.jobs) == 4
