"""``manage.py generate_trace``: a synthetic trace the SWF parser reads back (no database)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from traces.core.swf import read_swf
from traces.core.synthetic import generate_lublin


@pytest.mark.parametrize("suffix", [".swf", ".swf.gz"])
def test_command_writes_a_trace_the_parser_reads_back(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"demo{suffix}"
    stdout = io.StringIO()
    call_command("generate_trace", str(out), jobs=400, procs=64, seed=9, verbosity=0, stdout=stdout)
    assert "serial share" in stdout.getvalue() and "offered load" in stdout.getvalue()
    trace = read_swf(out)
    assert trace.machine_procs == 64 and trace.report.skipped_lines == 0
    expected = generate_lublin(400, 64, rng=np.random.default_rng(9))
    pd.testing.assert_frame_equal(trace.jobs, expected)


def test_command_reports_an_unwritable_path(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot write"):
        call_command("generate_trace", str(tmp_path / "no" / "x.swf"), jobs=10, verbosity=0)
