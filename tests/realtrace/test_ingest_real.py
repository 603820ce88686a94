"""Every shared PWA trace imports through the command and the API and matches MANIFEST.md."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.service.traces_support import api_for, make_user, post_trace
from traces.models import Trace

pytestmark = [pytest.mark.realtrace, pytest.mark.django_db]


def manifest_rows(folder: Path) -> dict[str, tuple[int, int]]:
    """File -> (job lines, MaxProcs or else MaxNodes) from the manifest's table."""
    rows: dict[str, tuple[int, int]] = {}
    lines = (folder / "MANIFEST.md").read_text().splitlines()
    header = next(line for line in lines if line.startswith("| File"))
    names = [cell.strip() for cell in header.strip("|").split("|")]
    jobs_at, procs_at = names.index("Job lines"), names.index("MaxProcs (header)")
    for line in lines:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if not line.startswith("|") or not cells[0].endswith(".swf.gz"):
            continue
        procs = re.match(r"^(\d+)", cells[procs_at]) or re.search(
            r"MaxNodes (\d+)", cells[procs_at]
        )
        assert procs, f"cannot read the machine size of {cells[0]}: {cells[procs_at]!r}"
        rows[cells[0]] = (int(cells[jobs_at]), int(procs.group(1)))
    return rows


def stored(name: str) -> tuple[int, int]:
    trace = Trace.objects.get(name=name)
    assert trace.status == "done", trace.error
    header_size = trace.header.get("max_procs") or trace.header.get("max_nodes")
    assert header_size == trace.machine_procs
    return trace.job_count, trace.machine_procs


def test_manifest_lists_every_shared_trace(shared_traces) -> None:
    files = {p.name for p in shared_traces.glob("*.swf.gz")}
    assert files and set(manifest_rows(shared_traces)) == files


def test_all_shared_traces_import_through_the_command(shared_traces) -> None:
    expected = manifest_rows(shared_traces)
    got = {}
    for filename in sorted(expected):
        call_command(
            "import_swf",
            str(shared_traces / filename),
            "--name",
            filename,
            stdout=StringIO(),
            stderr=StringIO(),
        )
        got[filename] = stored(filename)
    assert got == expected


def test_all_shared_traces_import_through_the_api(
    shared_traces, settings, tmp_path, django_capture_on_commit_callbacks
) -> None:
    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path)
    client = api_for(make_user("uploader"))
    expected = manifest_rows(shared_traces)
    got = {}
    for filename in sorted(expected):
        with django_capture_on_commit_callbacks(execute=True):
            response = post_trace(client, shared_traces / filename, name=filename)
        assert response.status_code == 202, response.data
        assert client.get(response["Location"]).data["status"] == "done"
        got[filename] = stored(filename)
    assert got == expected
