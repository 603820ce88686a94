"""``fetch_trace``: the archive's URL pattern, checksums, and a local HTTP server."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.service.traces_support import SMALL, SMALL_JOBS, database_is_empty, gzip_copy
from traces.models import Trace
from traces.services.fetch import FetchError, archive_directory

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def archive(tmp_path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on 127.0.0.1 (ephemeral port) serving ``tmp_path/archive``."""
    root = tmp_path / "archive"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


def fetch(*args: str) -> str:
    out = StringIO()
    call_command("fetch_trace", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "directory"),
    [
        ("KTH-SP2-1996-2.1-cln.swf.gz", "l_kth_sp2"),
        ("SDSC-SP2-1998-4.2-cln.swf.gz", "l_sdsc_sp2"),
        ("CTC-SP2-1996-3.1-cln.swf.gz", "l_ctc_sp2"),
        ("HPC2N-2002-2.2-cln.swf.gz", "l_hpc2n"),
        ("SDSC-BLUE-2000-4.2-cln.swf.gz", "l_sdsc_blue"),
        ("ANL-Intrepid-2009-1.swf.gz", "l_anl_int"),
    ],
)
def test_archive_directory_follows_the_pwa_pattern(name: str, directory: str) -> None:
    assert archive_directory(name) == directory


def test_archive_directory_of_an_odd_name_asks_for_url() -> None:
    with pytest.raises(FetchError, match="--url"):
        archive_directory("lublin_256.swf.gz")


@pytest.mark.realtrace
@pytest.mark.django_db
def test_fetch_downloads_checks_and_imports_a_shared_trace(shared_traces, archive) -> None:
    base, root = archive
    (root / "l_kth_sp2").mkdir()
    shutil.copy(shared_traces / KTH, root / "l_kth_sp2" / KTH)
    output = fetch(KTH, "--base-url", base)
    assert "matches the known sha256" in output
    trace = Trace.objects.get(name="KTH-SP2-1996-2.1-cln")
    assert (trace.job_count, trace.machine_procs) == (28476, 100)
    assert trace.source == f"{base}/l_kth_sp2/{KTH}"


@pytest.mark.django_db
def test_fetch_refuses_a_file_whose_checksum_does_not_match(archive) -> None:
    base, root = archive
    (root / "l_kth_sp2").mkdir()
    gzip_copy(SMALL, root / "l_kth_sp2" / KTH)  # right name, wrong bytes
    with pytest.raises(CommandError, match="checksum mismatch"):
        fetch(KTH, "--base-url", base)
    assert database_is_empty()


@pytest.mark.django_db
def test_fetch_of_a_file_without_known_checksum_imports_it(archive) -> None:
    base, root = archive
    (root / "l_test_site").mkdir()
    gzip_copy(SMALL, root / "l_test_site" / "TEST-SITE-2020-1.swf.gz")
    output = fetch("TEST-SITE-2020-1.swf.gz", "--base-url", base, "--name", "site")
    assert "no known checksum" in output
    assert Trace.objects.get(name="site").job_count == SMALL_JOBS


@pytest.mark.django_db
def test_fetch_with_an_explicit_url(archive) -> None:
    base, root = archive
    gzip_copy(SMALL, root / "anywhere.swf.gz")
    fetch("anything.swf.gz", "--url", f"{base}/anywhere.swf.gz")
    assert Trace.objects.get(name="anything").job_count == SMALL_JOBS


@pytest.mark.django_db
def test_fetch_of_a_missing_file_reports_the_http_status(archive) -> None:
    base, _root = archive
    with pytest.raises(CommandError, match="HTTP 404"):
        fetch(KTH, "--base-url", base)
    assert database_is_empty()
