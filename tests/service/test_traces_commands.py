"""``import_swf``: a summary on success, a CommandError and an untouched database otherwise."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.service.traces_support import (
    BAD_FILES,
    FIXTURES,
    SMALL,
    SMALL_JOBS,
    database_is_empty,
    make_user,
    truncated_gzip,
)
from traces.models import Job, Trace

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("import_swf", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_import_prints_a_summary_and_stores_the_trace() -> None:
    output = run(str(SMALL), "--name", "small", "--description", "hand-made")
    trace = Trace.objects.get(name="small")
    assert trace.job_count == SMALL_JOBS and trace.description == "hand-made"
    for expected in (
        "jobs           12",
        "MaxProcs       64",
        "skipped lines  0",
        "missing_run_time 1",
        "rows/s",
        "span, days     0.0",
    ):
        assert expected in output


def test_import_names_the_trace_after_the_file() -> None:
    run(str(SMALL))
    assert Trace.objects.filter(name="traces_small").exists()


def test_import_under_an_existing_name_fails_and_keeps_the_old_trace() -> None:
    run(str(SMALL), "--name", "small")
    with pytest.raises(CommandError, match="'small' already exists"):
        run(str(FIXTURES / "traces_duplicate.swf"), "--name", "small", "--lenient")
    assert Job.objects.count() == SMALL_JOBS


def test_import_with_replace_swaps_the_trace() -> None:
    run(str(SMALL), "--name", "small")
    run(str(FIXTURES / "traces_duplicate.swf"), "--name", "small", "--lenient", "--replace")
    assert Trace.objects.get(name="small").job_count == 5


@pytest.mark.parametrize("filename", sorted(BAD_FILES))
def test_import_of_a_bad_file_names_the_line_and_stores_nothing(filename: str) -> None:
    line, field, reason = BAD_FILES[filename]
    with pytest.raises(CommandError, match=f"line {line}") as caught:
        run(str(FIXTURES / filename))
    assert reason in str(caught.value)
    assert field is None or repr(field) in str(caught.value)
    assert database_is_empty()


def test_lenient_import_lists_the_skipped_line() -> None:
    output = run(str(FIXTURES / "traces_non_number.swf"), "--lenient")
    assert "skipped lines  1" in output
    assert "skipped line 17: not a number (field run_time, value 'ten')" in output


@pytest.mark.parametrize("filename", ["traces_empty.swf"])
def test_import_of_an_empty_file_fails_and_stores_nothing(filename: str) -> None:
    with pytest.raises(CommandError, match="empty file"):
        run(str(FIXTURES / filename))
    assert database_is_empty()


def test_import_of_a_truncated_gzip_fails_and_stores_nothing(tmp_path) -> None:
    with pytest.raises(CommandError, match="truncated or corrupt gzip"):
        run(str(truncated_gzip(SMALL, tmp_path / "cut.swf.gz")))
    assert database_is_empty()


def test_import_of_a_missing_file_says_so() -> None:
    with pytest.raises(CommandError, match="no such file"):
        run("/no/such/file.swf")


def test_import_sets_the_owner_and_refuses_unknown_users() -> None:
    alice = make_user("alice")
    run(str(SMALL), "--owner", "alice")
    assert Trace.objects.get().owner == alice
    with pytest.raises(CommandError, match="--owner nobody: no such user"):
        run(str(SMALL), "--name", "other", "--owner", "nobody")
