"""The replay and export_pyss commands."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from tests.service.traces_support import SMALL
from traces.core.swf import read_swf
from traces.services import ingest_swf


def run(*args: str, **opts) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO(), **opts)
    return out.getvalue()


def test_replay_prints_both_views_and_writes_csv_and_json(tmp_path: Path) -> None:
    csv, stats = tmp_path / "jobs.csv", tmp_path / "stats.json"
    text = run("replay", swf=str(SMALL), output=str(csv), json=str(stats))
    assert "all jobs" in text and "pyss view" in text and "utilisation" in text
    frame = pd.read_csv(csv)
    assert list(frame.columns) == [
        "job_id", "submit_time", "start_time", "end_time", "processors", "estimate",
    ]  # fmt: skip
    assert (frame.start_time >= frame.submit_time).all()
    summary = json.loads(stats.read_text())
    assert summary["run"]["mode"] == "default"
    assert summary["all_jobs"]["n_jobs"] == len(frame)


def test_replay_in_pyss_mode_keeps_every_record_and_says_so(tmp_path: Path) -> None:
    csv = tmp_path / "jobs.csv"
    text = run("replay", swf=str(SMALL), mode="pyss", processors=64, output=str(csv))
    assert "PySS conversions applied" in text
    assert len(pd.read_csv(csv)) == len(read_swf(SMALL).jobs)


@pytest.mark.django_db
def test_replay_reads_a_stored_trace_by_name() -> None:
    ingest_swf(SMALL, name="small")
    text = run("replay", "small", scheduler="fcfs")
    assert "small: " in text and "fcfs" in text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "opts", "message"),
    [((), {}, "exactly one"), ((), {"swf": "/nonexistent.swf"}, "no such file"),
     ((), {"swf": str(SMALL), "processors": 0}, "processors must be >= 1")],
)  # fmt: skip
def test_replay_refuses_bad_arguments(args: tuple, opts: dict, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run("replay", *args, **opts)


def test_export_pyss_writes_an_swf_that_replays_the_same(tmp_path: Path) -> None:
    out = tmp_path / "pyss.swf"
    text = run("export_pyss", str(out), swf=str(SMALL))
    assert "--num-processors 64" in text
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    run("replay", swf=str(SMALL), mode="pyss", output=str(first))
    run("replay", swf=str(out), mode="pyss", output=str(second))
    a, b = pd.read_csv(first), pd.read_csv(second)
    assert a.start_time.tolist() == b.start_time.tolist()


def test_export_pyss_needs_an_output_path() -> None:
    with pytest.raises(CommandError, match="usage"):
        run("export_pyss", "name", "out.swf", swf=str(SMALL))
