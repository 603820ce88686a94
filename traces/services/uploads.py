"""Uploads through the API and the pages: a pending row now, the ingest in a task."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from queuecast.longrun import Claim, Status, enqueue, execute
from traces.models import Trace
from traces.services.errors import TraceFormatError, TraceTooLarge
from traces.services.ingest import (
    AlreadyIngested,
    check_name_free,
    check_quota,
    create_trace_row,
    ingest_into,
)

logger = logging.getLogger(__name__)
MULTIPART_SLACK = 64 * 1024  # form fields and boundaries around the file
INGEST_TASK = "traces.tasks.ingest_trace"  # by name: services never import task modules


def default_name(filename: str) -> str:
    """``KTH-SP2-1996-2.1-cln.swf.gz`` -> ``KTH-SP2-1996-2.1-cln``."""
    name = Path(filename).name
    for suffix in (".gz", ".swf"):
        name = name.removesuffix(suffix)
    return name or "trace"


def check_request_size(content_length: str | int | None) -> None:
    """Refuse an oversized upload from its Content-Length, before reading the body."""
    try:
        length = int(content_length or 0)
    except ValueError:
        return
    if length > settings.QUEUECAST_MAX_UPLOAD_BYTES + MULTIPART_SLACK:
        raise _too_large(length)


def accept_upload(
    upload: UploadedFile,
    *,
    owner: Any,
    name: str = "",
    description: str = "",
    lenient: bool = False,
) -> Trace:
    """Save ``upload``, create its ``pending`` trace and enqueue the ingest on commit.

    Two uploads racing for one name: the loser gets :class:`TraceNameTaken` (409). If the
    task queue is down the row and the file are removed again (the name is free) and
    ``QueueUnavailable`` (503) is raised.
    """
    if upload.size > settings.QUEUECAST_MAX_UPLOAD_BYTES:
        raise _too_large(upload.size)
    name = name or default_name(upload.name or "")
    check_name_free(name)
    check_quota(owner)
    upload_dir = Path(settings.QUEUECAST_UPLOAD_DIR)
    upload_dir.mkdir(parents=True, exist_ok=True)
    with transaction.atomic():
        source = f"upload:{upload.name or ''}"[:500]
        trace = create_trace_row(name, owner, description, lenient, source, status=Status.PENDING)
        path = upload_dir / f"trace-{trace.pk}-{_safe(upload.name or 'upload.swf')}"
        _save(upload, path)
        Trace.objects.filter(pk=trace.pk).update(upload_path=str(path))
        enqueue(trace, INGEST_TASK, on_failure=lambda _why: _forget(trace.pk, path))
    trace.refresh_from_db()
    return trace


def _forget(trace_id: int, path: Path) -> None:
    """Undo an upload whose ingest could not be queued: no row, no file, the name free."""
    Trace.objects.filter(pk=trace_id, status=Status.PENDING).delete()
    path.unlink(missing_ok=True)


def run_pending_ingest(trace_id: int) -> str:
    """The task's body: claim the row, ingest its upload, record done or failed.

    A redelivered message whose worker died re-runs the ingest (its job rows were rolled
    back with its transaction); see ``queuecast.longrun``.
    """
    final = execute(Trace, trace_id, _ingest_upload)
    if final in (Status.DONE, Status.FAILED):
        path = Trace.objects.filter(pk=trace_id).values_list("upload_path", flat=True).first()
        if path:
            Path(path).unlink(missing_ok=True)
    return final


def _ingest_upload(claim: Claim) -> None:
    trace = Trace.objects.get(pk=claim.pk)
    if not trace.upload_path or not Path(trace.upload_path).is_file():
        raise TraceFormatError(f"the uploaded file is gone ({trace.upload_path or 'no path'})")
    try:
        ingest_into(trace, trace.upload_path, claim)
    except AlreadyIngested:
        logger.warning("trace %s was taken over by another worker", claim.pk)


def _save(upload: UploadedFile, path: Path) -> None:
    try:
        with path.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def _safe(filename: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", Path(filename).name)[-100:] or "upload.swf"


def _too_large(size: int) -> TraceTooLarge:
    limit = settings.QUEUECAST_MAX_UPLOAD_BYTES
    return TraceTooLarge(
        f"upload of {size} bytes is over the limit of {limit} bytes "
        f"({limit / 2**20:.0f} MB, QUEUECAST_MAX_UPLOAD_MB); compress it with gzip "
        "or import it on the server with `manage.py import_swf`",
        field="file",
        limit_bytes=limit,
    )
