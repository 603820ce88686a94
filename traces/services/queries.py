"""Reading stored traces back: job tables for the numeric cores, SWF export, filters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from django.core.management.base import CommandError
from django.db import connection
from django.db.models import QuerySet

from queuecast.longrun import Status
from traces.core.swf import (
    INT_FIELDS,
    SWF_FIELDS,
    IngestReport,
    SwfFormatError,
    SwfHeader,
    SwfTrace,
    format_jobs,
    read_swf,
)
from traces.models import Job, Trace
from traces.services.bulkload import job_columns

EXPORT_CHUNK_ROWS = 20_000


def jobs_frame(trace: Trace | int) -> pd.DataFrame:
    """The trace's jobs as the core reader returns them: SWF_FIELDS, typed, by submit time."""
    trace_id = trace if isinstance(trace, int) else trace.pk
    columns = ", ".join(connection.ops.quote_name(c) for c in job_columns(SWF_FIELDS))
    sql = (
        f"SELECT {columns} FROM {Job._meta.db_table} WHERE trace_id = %s "
        "ORDER BY submit_time, id"  # id = insertion order = the parser's stable order
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [trace_id])
        rows = cursor.fetchall()
    table = np.array(rows, dtype=np.float64).reshape(len(rows), len(SWF_FIELDS))
    return pd.DataFrame(
        {
            f: table[:, i].astype(np.int64) if f in INT_FIELDS else table[:, i]
            for i, f in enumerate(SWF_FIELDS)
        }
    )


def swf_trace_for(trace: Trace) -> SwfTrace:
    """Header, jobs and report of a stored trace, as ``read_swf`` would give them."""
    report = IngestReport(**_known(IngestReport, trace.ingest_report))
    return SwfTrace(
        header=SwfHeader.from_dict(trace.header or {}),
        jobs=jobs_frame(trace),
        report=report,
        name=trace.name,
    )


def resolve_trace(name: str | None, swf_path: str | None, *, lenient: bool = False) -> SwfTrace:
    """For commands taking ``TRACE_NAME | --swf PATH``; errors are ``CommandError``."""
    if bool(name) == bool(swf_path):
        raise CommandError("give exactly one of a stored TRACE_NAME or --swf PATH")
    if swf_path:
        if not Path(swf_path).is_file():
            raise CommandError(f"--swf {swf_path}: no such file")
        try:
            return read_swf(swf_path, strict=not lenient)
        except SwfFormatError as exc:
            raise CommandError(str(exc)) from exc
    trace = Trace.objects.filter(name=name).first()
    if trace is None:
        known = ", ".join(Trace.objects.order_by("name").values_list("name", flat=True)[:20])
        raise CommandError(f"no trace named {name!r} (stored: {known or 'none'})")
    if trace.status != Status.DONE:
        raise CommandError(
            f"trace {name!r} is {trace.status}, not done: {trace.error}".rstrip(": ")
        )
    return swf_trace_for(trace)


def filter_jobs(trace: Trace, filters: dict[str, Any]) -> QuerySet[Job]:
    """Jobs of ``trace`` filtered by user, queue and a submit-time window (seconds)."""
    jobs = Job.objects.filter(trace=trace)
    lookups = {
        "user": "user_id",
        "queue": "queue_id",
        "submit_after": "submit_time__gte",
        "submit_before": "submit_time__lt",
    }
    for key, lookup in lookups.items():
        if filters.get(key) is not None:
            jobs = jobs.filter(**{lookup: filters[key]})
    return jobs.order_by("submit_time", "id")


def export_lines(trace: Trace) -> Iterator[str]:
    """SWF text of a stored trace, in chunks: the header, then the jobs (``write_swf`` form)."""
    header = SwfHeader.from_dict(trace.header or {})
    yield "".join(line + "\n" for line in header.to_lines())
    jobs = jobs_frame(trace)
    for start in range(0, len(jobs), EXPORT_CHUNK_ROWS):
        yield format_jobs(jobs.iloc[start : start + EXPORT_CHUNK_ROWS])


def _known(cls: type, data: dict[str, Any] | None) -> dict[str, Any]:
    fields = cls.__dataclass_fields__  # type: ignore[attr-defined]
    return {k: v for k, v in (data or {}).items() if k in fields}
