"""Uploads through the API and the pages: a pending row now, the ingest in a task."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from queuecast.errors import QueuecastError
from queuecast.longrun import Status, enqueue_on_commit
from queuecast.progress import throttled
from traces.models import Trace
from traces.services.errors import TraceTooLarge
from traces.services.ingest import (
    AlreadyIngested,
    check_name_free,
    check_quota,
    ingest_into,
)

logger = logging.getLogger(__name__)
MULTIPART_SLACK = 64 * 1024  # form fields and boundaries around the file


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
    """Save ``upload``, create its ``pending`` trace and enqueue the ingest on commit."""
    if upload.size > settings.QUEUECAST_MAX_UPLOAD_BYTES:
        raise _too_large(upload.size)
    name = name or default_name(upload.name or "")
    check_name_free(name)
    check_quota(owner)
    upload_dir = Path(settings.QUEUECAST_UPLOAD_DIR)
    upload_dir.mkdir(parents=True, exist_ok=True)
    with transaction.atomic():
        trace = Trace.objects.create(
            name=name,
            owner=owner,
            description=description,
            lenient=lenient,
            source=f"upload:{upload.name}"[:500],
            status=Status.PENDING,
        )
        path = upload_dir / f"trace-{trace.pk}-{_safe(upload.name or 'upload.swf')}"
        _save(upload, path)
        Trace.objects.filter(pk=trace.pk).update(upload_path=str(path))
        from traces.tasks import ingest_trace  # the task module imports this one

        enqueue_on_commit(ingest_trace, trace.pk)
    trace.refresh_from_db()
    return trace


def run_pending_ingest(trace_id: int) -> str:
    """The task's body: claim the row, ingest its upload, record done or failed."""
    trace = _claim(trace_id)
    if trace is None:
        return "skipped"
    try:
        ingest_into(trace, trace.upload_path, progress=throttled(_progress_writer(trace_id)))
    except AlreadyIngested:
        return "skipped"
    except QueuecastError as exc:
        _fail(trace_id, exc.detail)
    except Exception as exc:  # a bug or a lost database must still end the row
        logger.exception("ingest of trace %s crashed", trace_id)
        _fail(trace_id, f"ingest crashed: {type(exc).__name__}: {exc}")
    final = Trace.objects.filter(pk=trace_id).values_list("status", flat=True).first()
    if final in (Status.DONE, Status.FAILED):
        Path(trace.upload_path).unlink(missing_ok=True)
    return final or "deleted"


def _claim(trace_id: int) -> Trace | None:
    """Pending -> running; a row left ``running`` by a killed worker is re-claimed.

    With ``acks_late`` a message comes back only if its worker died before finishing,
    and the job rows it wrote were rolled back with its transaction, so a
    ``running`` row is safe to take over; ``ingest_into`` re-checks under a row lock.
    """
    if not Trace.claim(trace_id):
        reclaimed = Trace.objects.filter(pk=trace_id, status=Status.RUNNING).update(
            started_at=timezone.now(), progress=0.0
        )
        if not reclaimed:
            return None
        logger.warning("trace %s was left running by a lost worker; ingesting again", trace_id)
    trace = Trace.objects.get(pk=trace_id)
    if not trace.upload_path or not Path(trace.upload_path).is_file():
        _fail(trace_id, f"the uploaded file is gone ({trace.upload_path or 'no path'})")
        return None
    return trace


def _fail(trace_id: int, reason: str) -> None:
    Trace.objects.filter(pk=trace_id, status=Status.RUNNING).update(
        status=Status.FAILED, error=reason[:10_000], finished_at=timezone.now()
    )


def _progress_writer(trace_id: int):
    def write(fraction: float) -> None:
        Trace.objects.filter(pk=trace_id, status=Status.RUNNING).update(progress=fraction)

    return write


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
