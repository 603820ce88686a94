"""Ingest of an SWF log: parse with the core reader, store Trace + Jobs atomically.

Parsing happens before the transaction (it is pure); the job rows, the trace's
summary and its ``done`` status are written in ONE transaction, so a failure or a
killed worker leaves no half-stored trace behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from queuecast.longrun import Claim, Status
from traces.core.swf import SwfFormatError, SwfLimitError, SwfLimits, SwfTrace, read_swf
from traces.models import Trace
from traces.services.bulkload import insert_jobs
from traces.services.errors import (
    QuotaExceeded,
    TraceFormatError,
    TraceNameTaken,
    TraceTooLarge,
)
from traces.services.summary import trace_summary

ProgressFn = Callable[[float], None]
Source = str | os.PathLike | IO[bytes]
PARSE_SHARE = 0.5  # of the progress bar; the rest is the database load


class AlreadyIngested(Exception):
    """Another delivery of the same task finished this trace first."""


def ingest_swf(
    source: Source,
    *,
    name: str,
    owner: Any = None,
    lenient: bool = False,
    replace: bool = False,
    description: str = "",
    progress: ProgressFn | None = None,
) -> Trace:
    """Parse ``source`` and store it as a new trace called ``name`` (whole or not at all).

    Raises :class:`TraceNameTaken` if ``name`` exists and ``replace`` is False (with
    ``replace`` the old trace is deleted in the same transaction),
    :class:`TraceFormatError` for a bad file, :class:`TraceTooLarge` /
    :class:`QuotaExceeded` over the limits in settings.
    """
    if not replace:
        check_name_free(name)
    check_quota(owner, replacing=name if replace else None)
    parsed = parse_source(source, lenient=lenient, progress=_scaled(progress, 0.0, PARSE_SHARE))
    with transaction.atomic():
        if replace:
            Trace.objects.filter(name=name).delete()
        check_quota(owner)
        trace = create_trace_row(
            name, owner, description, lenient, _source_label(source),
            status=Status.RUNNING, started_at=timezone.now(),
        )  # fmt: skip
        _store(trace, parsed, _scaled(progress, PARSE_SHARE, 1.0))
    trace.refresh_from_db()
    return trace


def ingest_into(trace: Trace, source: Source, claim: Claim) -> Trace:
    """Fill a claimed (``running``) trace row with the jobs of ``source``.

    The jobs and the ``done`` status commit together; if the claim was lost meanwhile
    (another worker took the row over) :class:`AlreadyIngested` rolls the jobs back.
    """
    parsed = parse_source(
        source, lenient=trace.lenient, progress=_scaled(claim.progress, 0, PARSE_SHARE)
    )
    with transaction.atomic():
        insert_jobs(trace.pk, parsed.jobs, _scaled(claim.progress, PARSE_SHARE, 0.99))
        if not claim.finish(**trace_summary(parsed)):
            raise AlreadyIngested(f"trace {trace.pk} was taken over by another worker")
    trace.refresh_from_db()
    return trace


def parse_source(
    source: Source,
    *,
    lenient: bool = False,
    label: str | None = None,
    progress: ProgressFn | None = None,
) -> SwfTrace:
    """``read_swf`` under the configured limits; a bad file is a :class:`TraceFormatError`
    (400), a file over a limit a :class:`TraceTooLarge` (413)."""
    name = label or (Path(source).name if isinstance(source, (str, os.PathLike)) else None)
    try:
        return read_swf(
            source, strict=not lenient, name=name, progress=progress, limits=read_limits()
        )
    except SwfLimitError as exc:
        raise TraceTooLarge(f"{name or 'the upload'}: {exc}", line=exc.line) from exc
    except SwfFormatError as exc:
        raise TraceFormatError(str(exc), line=exc.line, field=exc.field, value=exc.value) from exc
    except OSError as exc:
        raise TraceFormatError(f"cannot read {name or 'the upload'}: {exc}") from exc


def check_name_free(name: str) -> None:
    if Trace.objects.filter(name=name).exists():
        raise TraceNameTaken(
            f"a trace named {name!r} already exists; choose another name or replace it",
            field="name",
        )


def check_quota(owner: Any, *, replacing: str | None = None) -> None:
    """At most ``QUEUECAST_MAX_TRACES_PER_USER`` traces per owner (staff included)."""
    if owner is None:
        return
    limit = settings.QUEUECAST_MAX_TRACES_PER_USER
    owned = Trace.objects.filter(owner=owner).exclude(name=replacing or "").count()
    if owned >= limit:
        raise QuotaExceeded(
            f"user {owner.get_username()!r} already has {owned} traces; the limit "
            f"(QUEUECAST_MAX_TRACES_PER_USER) is {limit}: delete one first"
        )


def read_limits() -> SwfLimits:
    """The reader's bounds from settings (checked while streaming, docs/operations.md)."""
    return SwfLimits(
        max_bytes=settings.QUEUECAST_MAX_DECOMPRESSED_MB * 2**20,
        max_line_bytes=settings.QUEUECAST_MAX_LINE_BYTES,
        max_lines=settings.QUEUECAST_MAX_LINES,
        max_jobs=settings.QUEUECAST_MAX_JOBS_PER_TRACE,
        max_header_bytes=settings.QUEUECAST_MAX_HEADER_KB * 1024,
        max_span_s=settings.QUEUECAST_MAX_SPAN_DAYS * 86400.0,
        max_request_s=settings.QUEUECAST_MAX_REQUESTED_DAYS * 86400.0,
    )


def create_trace_row(
    name: str, owner: Any, description: str, lenient: bool, source: str, **state: Any
) -> Trace:
    """A trace row in the state ``state`` gives; a name already taken (also by a request
    racing this one) is a :class:`TraceNameTaken` naming the field."""
    try:
        with transaction.atomic():
            return Trace.objects.create(
                name=name,
                owner=owner,
                description=description,
                lenient=lenient,
                source=source,
                **state,
            )
    except IntegrityError:
        raise TraceNameTaken(f"a trace named {name!r} already exists", field="name") from None


def _store(trace: Trace, parsed: SwfTrace, progress: ProgressFn | None) -> None:
    """Insert the jobs and mark the trace done; the caller holds the transaction."""
    insert_jobs(trace.pk, parsed.jobs, progress)
    fields = trace_summary(parsed)
    fields.update(status=Status.DONE, progress=1.0, error="", finished_at=timezone.now())
    Trace.objects.filter(pk=trace.pk).update(**fields)


def _source_label(source: Source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)[:500]
    return str(getattr(source, "name", "<stream>"))[:500]


def _scaled(progress: ProgressFn | None, start: float, stop: float) -> ProgressFn | None:
    """Map a sub-step's 0..1 onto ``start..stop`` of the caller's bar."""
    if progress is None:
        return None
    return lambda fraction: progress(start + (stop - start) * fraction)
