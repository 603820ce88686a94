"""Helpers shared by the traces service tests (not a test module)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from traces.models import Job, Trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SMALL = FIXTURES / "traces_small.swf"
SMALL_JOBS = 12
BAD_FILES = {
    "traces_17_fields.swf": (17, None, "expected 18 fields, found 17"),
    "traces_19_fields.swf": (17, None, "expected 18 fields, found 19"),
    "traces_non_number.swf": (17, "run_time", "not a number"),
    "traces_duplicate.swf": (17, "job_id", "duplicate job number"),
}


def make_user(username: str, *, staff: bool = False, password: str | None = None) -> Any:
    """No password unless asked: hashing one costs half a second."""
    return get_user_model().objects.create_user(username, password=password, is_staff=staff)


def api_for(user: Any | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def post_trace(client: APIClient, path: Path, **fields: Any):
    with path.open("rb") as handle:
        return client.post("/api/traces/", {"file": handle, **fields}, format="multipart")


def gzip_copy(src: Path, dest: Path) -> Path:
    dest.write_bytes(gzip.compress(src.read_bytes()))
    return dest


def truncated_gzip(src: Path, dest: Path) -> Path:
    data = gzip.compress(src.read_bytes() * 20)
    dest.write_bytes(data[: len(data) // 2])
    return dest


def binary_file(dest: Path) -> Path:
    dest.write_bytes(bytes(range(256)) * 8)
    return dest


def database_is_empty() -> bool:
    return not Trace.objects.exists() and not Job.objects.exists()


def demo_trace(folder: Path, header: str = "") -> Trace:
    """500 jobs of ``make_jobs`` on 128 processors stored as the trace ``demo``."""
    from tests.core.wait_fakes import make_jobs
    from traces.core.swf import format_jobs
    from traces.services import ingest_swf

    path = folder / "demo.swf"
    path.write_text(header + "; MaxProcs: 128\n" + format_jobs(make_jobs(500)))
    return ingest_swf(path, name="demo")
