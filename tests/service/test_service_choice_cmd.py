"""service_choice prints the candidates' dev scores, the choice and its test-part scores."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import numpy as np
from django.core.management import call_command

from predictor.core.runtime.choose import RUNTIME_CANDIDATES
from predictor.management.commands.service_choice import test_rows as sample_rows
from tests.core.wait_fakes import make_jobs
from traces.core.swf import format_jobs


def test_service_choice_prints_the_choice_and_the_test_part_beside_the_requested_time(
    tmp_path: Path,
):
    path = tmp_path / "small.swf"
    path.write_text("; MaxProcs: 128\n" + format_jobs(make_jobs(500)))
    out = StringIO()
    call_command("service_choice", swf=str(path), sample=40, stdout=out)
    text = out.getvalue()
    for name in RUNTIME_CANDIDATES:
        assert f"| {name} | " in text
    chosen = text.split("chosen: ")[1].split(" ")[0]
    assert chosen in RUNTIME_CANDIDATES and f"| {chosen} (chosen) | " in text
    assert "| requested time | " in text and "scoring 40 test jobs" in text


def test_test_rows_are_after_the_tuning_part_with_a_runtime_and_evenly_spread():
    run = np.array([5.0, 5.0, -1.0, 3.0, 0.0, 7.0, 8.0, 9.0])
    assert sample_rows(run, 2, 10).tolist() == [3, 5, 6, 7]
    assert sample_rows(run, 2, 2).tolist() == [3, 7]
