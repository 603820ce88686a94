"""Every log in QUEUECAST_TRACES_DIR reads in strict mode with its expected job count.

Parsing only (the core reader; the database path is covered by test_ingest_real.py for the
MANIFEST files): about 2 s for the shared set. A log the MANIFEST lists must match its
"Job lines"; a log kept outside the project (not listed) must match its header: MaxRecords,
or for a cleaned log MaxRecords (else MaxJobs) minus the "(N jobs removed)" counts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.realtrace.test_ingest_real import manifest_rows
from traces.core.swf import SwfTrace, read_swf

pytestmark = pytest.mark.realtrace

_REMOVED = re.compile(r"\((\d+) jobs? removed\)")


def header_counts(trace: SwfTrace) -> set[int]:
    """Job counts the header allows: MaxRecords, MaxJobs, either minus the removed jobs."""
    removed = sum(int(n) for line in trace.header.to_lines() for n in _REMOVED.findall(line))
    totals = {n for n in (trace.header.max_records, trace.header.max_jobs) if n}
    return totals | {n - removed for n in totals}


def logs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.endswith((".swf", ".swf.gz")))


def test_every_log_in_the_folder_reads_strictly_with_its_expected_job_count(
    shared_traces: Path,
) -> None:
    listed = manifest_rows(shared_traces) if (shared_traces / "MANIFEST.md").exists() else {}
    wrong = {}
    for path in logs(shared_traces):
        trace = read_swf(path, strict=True)
        n = len(trace.jobs)
        assert trace.report.skipped_lines == 0
        if path.name in listed:
            expected = {listed[path.name][0]}
        else:
            expected = header_counts(trace)
            assert expected, f"{path.name}: not in MANIFEST.md and no MaxRecords/MaxJobs"
        if n not in expected:
            wrong[path.name] = (n, sorted(expected))
    assert not wrong, f"job count differs (got, expected): {wrong}"
