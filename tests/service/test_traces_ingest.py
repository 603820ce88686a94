"""The ingest service: whole traces stored in one transaction, clear errors otherwise."""

from __future__ import annotations

import pandas as pd
import pytest
from django.core.management.base import CommandError

from queuecast.longrun import Status
from tests.service.traces_support import (
    BAD_FILES,
    FIXTURES,
    SMALL,
    SMALL_JOBS,
    binary_file,
    database_is_empty,
    gzip_copy,
    make_user,
    truncated_gzip,
)
from traces.core.swf import read_swf
from traces.models import Job, Trace
from traces.services import (
    QuotaExceeded,
    TraceFormatError,
    TraceNameTaken,
    TraceTooLarge,
    ingest_swf,
    jobs_frame,
    resolve_trace,
    swf_trace_for,
)

pytestmark = pytest.mark.django_db


def test_ingest_stores_every_job_and_the_summary() -> None:
    trace = ingest_swf(SMALL, name="small")
    assert trace.status == Status.DONE and trace.progress == 1.0
    assert trace.job_count == SMALL_JOBS == Job.objects.filter(trace=trace).count()
    assert (trace.first_submit_s, trace.last_submit_s) == (0.0, 1500.0)
    assert trace.machine_procs == 64
    assert trace.header["computer"] == "Hand-made test machine"
    assert trace.ingest_report["job_lines"] == SMALL_JOBS
    assert trace.ingest_report["oddities"]["missing_run_time"] == 1


def test_utilisation_is_work_over_capacity_ignoring_missing_run_times() -> None:
    jobs = read_swf(SMALL).jobs
    ok = jobs[(jobs.run_time >= 0) & (jobs.allocated_procs > 0)]
    span = (ok.submit_time + ok.wait_time.clip(lower=0) + ok.run_time).max()
    expected = (ok.run_time * ok.allocated_procs).sum() / (64 * span)
    assert ingest_swf(SMALL, name="small").utilisation == pytest.approx(expected)


def test_jobs_frame_equals_what_the_parser_returns(tmp_path) -> None:
    trace = ingest_swf(gzip_copy(SMALL, tmp_path / "small.swf.gz"), name="gz")
    pd.testing.assert_frame_equal(jobs_frame(trace), read_swf(SMALL).jobs)


def test_swf_trace_for_gives_back_header_jobs_and_report() -> None:
    trace = ingest_swf(SMALL, name="small")
    parsed, stored = read_swf(SMALL), swf_trace_for(trace)
    assert stored.header == parsed.header
    assert stored.machine_procs == 64
    assert stored.report.job_lines == SMALL_JOBS
    pd.testing.assert_frame_equal(stored.jobs, parsed.jobs)


@pytest.mark.parametrize("filename", sorted(BAD_FILES))
def test_bad_line_names_line_and_field_and_stores_nothing(filename: str) -> None:
    line, field, reason = BAD_FILES[filename]
    with pytest.raises(TraceFormatError) as caught:
        ingest_swf(FIXTURES / filename, name="bad")
    assert caught.value.context["line"] == line
    assert caught.value.context.get("field") == field
    assert reason in caught.value.detail and f"line {line}" in caught.value.detail
    assert database_is_empty()


@pytest.mark.parametrize("filename", sorted(BAD_FILES))
def test_lenient_ingest_skips_the_bad_line_and_reports_it(filename: str) -> None:
    trace = ingest_swf(FIXTURES / filename, name="lenient", lenient=True)
    assert trace.job_count == 5
    assert trace.ingest_report["skipped_lines"] == 1
    assert trace.ingest_report["skipped_examples"][0]["line"] == BAD_FILES[filename][0]


def test_empty_file_is_refused_and_stores_nothing() -> None:
    with pytest.raises(TraceFormatError, match="empty file"):
        ingest_swf(FIXTURES / "traces_empty.swf", name="empty")
    assert database_is_empty()


def test_binary_file_is_refused_and_stores_nothing(tmp_path) -> None:
    with pytest.raises(TraceFormatError, match="binary data"):
        ingest_swf(binary_file(tmp_path / "noise.swf"), name="noise")
    assert database_is_empty()


def test_truncated_gzip_is_refused_and_stores_nothing(tmp_path) -> None:
    with pytest.raises(TraceFormatError, match="truncated or corrupt gzip"):
        ingest_swf(truncated_gzip(SMALL, tmp_path / "cut.swf.gz"), name="cut")
    assert database_is_empty()


def test_existing_name_is_a_conflict_and_keeps_the_old_trace() -> None:
    first = ingest_swf(SMALL, name="small")
    with pytest.raises(TraceNameTaken, match="already exists"):
        ingest_swf(FIXTURES / "traces_duplicate.swf", name="small", lenient=True)
    assert list(Trace.objects.values_list("pk", flat=True)) == [first.pk]
    assert Job.objects.count() == SMALL_JOBS


def test_replace_swaps_the_trace_in_one_go() -> None:
    ingest_swf(SMALL, name="small")
    second = ingest_swf(FIXTURES / "traces_duplicate.swf", name="small", lenient=True, replace=True)
    assert Trace.objects.get(name="small").pk == second.pk
    assert Job.objects.count() == 5


def test_failed_replace_keeps_the_old_trace() -> None:
    first = ingest_swf(SMALL, name="small")
    with pytest.raises(TraceFormatError):
        ingest_swf(FIXTURES / "traces_duplicate.swf", name="small", replace=True)
    assert Trace.objects.get(name="small").pk == first.pk
    assert Job.objects.count() == SMALL_JOBS


def test_too_many_jobs_is_refused(settings) -> None:
    settings.QUEUECAST_MAX_JOBS_PER_TRACE = SMALL_JOBS - 1
    with pytest.raises(TraceTooLarge, match="QUEUECAST_MAX_JOBS_PER_TRACE"):
        ingest_swf(SMALL, name="small")
    assert database_is_empty()


def test_traces_per_user_are_limited(settings) -> None:
    settings.QUEUECAST_MAX_TRACES_PER_USER = 1
    alice = make_user("alice")
    ingest_swf(SMALL, name="one", owner=alice)
    with pytest.raises(QuotaExceeded, match="QUEUECAST_MAX_TRACES_PER_USER"):
        ingest_swf(SMALL, name="two", owner=alice)
    assert ingest_swf(SMALL, name="one", owner=alice, replace=True).owner == alice


def test_resolve_trace_reads_a_stored_trace_or_a_file() -> None:
    ingest_swf(SMALL, name="small")
    assert len(resolve_trace("small", None).jobs) == SMALL_JOBS
    assert len(resolve_trace(None, str(SMALL)).jobs) == SMALL_JOBS


@pytest.mark.parametrize(
    ("name", "path", "message"),
    [
        (None, None, "exactly one"),
        ("small", "x.swf", "exactly one"),
        ("nope", None, "no trace named 'nope'"),
        (None, "/no/such.swf", "no such file"),
        (None, str(FIXTURES / "traces_non_number.swf"), "line 17"),
    ],
)
def test_resolve_trace_errors_are_command_errors(name, path, message) -> None:
    with pytest.raises(CommandError, match=message):
        resolve_trace(name, path)


@pytest.mark.django_db
def test_an_unlimited_requested_time_is_stored_as_unknown_and_reported(tmp_path) -> None:
    from traces.services import ingest_swf

    lines = SMALL.read_text().splitlines()
    first_job = next(k for k, line in enumerate(lines) if line.strip() and line[0] != ";")
    tokens = lines[first_job].split()
    tokens[8] = str(2**31 - 1)  # field 9: the archive's "unlimited"
    lines[first_job] = " ".join(tokens)
    path = tmp_path / "unlimited.swf"
    path.write_text("\n".join(lines) + "\n")
    trace = ingest_swf(path, name="unlimited")  # strict
    assert trace.status == Status.DONE and trace.job_count == SMALL_JOBS
    assert trace.ingest_report["oddities"]["unlimited_requested_time"] == 1
    assert Job.objects.get(trace=trace, job_number=int(tokens[0])).requested_time == -1
