"""``manage.py evaluate_wait``: tables, --json keys, the stored run, argument errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from predictor.models import EvaluationRun
from tests.core.wait_fakes import make_jobs
from traces.core.swf import format_jobs, read_swf
from traces.services import ingest_swf


def write_trace(path: Path, n: int = 500, seed: int = 0) -> Path:
    path.write_text("; MaxProcs: 128\n" + format_jobs(make_jobs(n, seed)))
    return path


@pytest.mark.django_db
def test_command_prints_tables_writes_json_and_stores_the_run(tmp_path: Path) -> None:
    swf = write_trace(tmp_path / "t.swf")
    out, json_path = io.StringIO(), tmp_path / "r.json"
    call_command(
        "evaluate_wait", swf=str(swf), methods="qbets,median,zero", limit=100,
        json=str(json_path), stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "AAE (h) per actual-wait class" in text and "qbets 0.95 bound" in text
    assert "test targets 100 of 400 usable" in text
    data = json.loads(json_path.read_text())
    # the intervals' coverage at 0.9 per class of the predicted wait, jobs in brackets
    by = data["median"]["interval"]["0.9"]["by_prediction"]
    row = next(line for line in text.split("Coverage at 0.9 by the predicted wait")[1].splitlines()
               if line.startswith("median"))  # fmt: skip
    cells = [f"{v['coverage']:.3f} ({v['jobs']})" for v in by.values() if v["jobs"]]
    assert cells and all(cell in row for cell in cells)
    assert list(data) == ["qbets", "median", "zero"]
    for numbers in data.values():
        assert {"jobs", "aae_s", "scaled_aae", "correct_share"} <= numbers.keys()
        assert numbers["jobs"] == 100
    run = EvaluationRun.objects.get()
    assert run.kind == "wait" and run.status == "done" and run.swf_path == str(swf)
    assert run.result == data
    assert run.params["selection"]["targets"] == 100


@pytest.mark.django_db
def test_command_evaluates_a_stored_trace_by_name(tmp_path: Path) -> None:
    trace = ingest_swf(write_trace(tmp_path / "t.swf"), name="demo")
    call_command("evaluate_wait", "demo", methods="zero", limit=20, stdout=io.StringIO())
    assert EvaluationRun.objects.get().trace == trace


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"methods": "qbets,oracle"}, "unknown methods"),
        ({"limit": 0}, "--limit"),
        ({"swf": None}, "exactly one"),
    ],
)
def test_command_refuses_bad_arguments(tmp_path: Path, kwargs: dict, message: str) -> None:
    opts = {"swf": str(write_trace(tmp_path / "t.swf", n=50)), **kwargs}
    with pytest.raises(CommandError, match=message):
        call_command("evaluate_wait", stdout=io.StringIO(), **opts)


@pytest.mark.django_db
def test_command_fails_cleanly_on_a_trace_without_known_waits(tmp_path: Path) -> None:
    jobs = make_jobs(50)
    jobs["wait_time"] = -1.0
    swf = tmp_path / "nowait.swf"
    swf.write_text("; MaxProcs: 128\n" + format_jobs(jobs))
    with pytest.raises(CommandError, match="no test targets"):
        call_command("evaluate_wait", swf=str(swf), methods="zero", stdout=io.StringIO())
    assert EvaluationRun.objects.get().status == "failed"


@pytest.mark.django_db
@pytest.mark.realtrace
def test_all_methods_run_on_a_slice_of_a_real_trace(shared_traces: Path, tmp_path: Path) -> None:
    source = read_swf(shared_traces / "KTH-SP2-1996-2.1-cln.swf.gz")
    swf = tmp_path / "kth3000.swf"
    swf.write_text("; MaxProcs: 100\n" + format_jobs(source.jobs.iloc[:3000]))
    json_path = tmp_path / "r.json"
    call_command(
        "evaluate_wait", swf=str(swf), methods="apq,qbets,ibl,median,gbm,zero", limit=150,
        json=str(json_path), stdout=io.StringIO(),
    )  # fmt: skip
    data = json.loads(json_path.read_text())
    assert {r["jobs"] for r in data.values()} == {150}
    assert all("ci_vs_apq" in r for name, r in data.items() if name != "apq")
    assert sum(data["apq"]["predictor_mix"].values()) == pytest.approx(1.0)


@pytest.mark.django_db
def test_simulate_waits_evaluates_a_log_without_waits(tmp_path) -> None:
    """A model-generated log (every wait -1) has no targets, unless waits come from a replay."""
    import numpy as np

    from traces.core.swf import SwfTrace, write_swf
    from traces.core.swf_header import parse_header
    from traces.core.synthetic import generate_lublin, lublin_header

    jobs = generate_lublin(600, 32, rng=np.random.default_rng(3))
    path = tmp_path / "nowaits.swf"
    write_swf(SwfTrace(header=parse_header(lublin_header(600, 32, seed=3)), jobs=jobs), path)
    with pytest.raises(CommandError, match="no test targets"):
        call_command("evaluate_wait", "--swf", str(path), "--methods", "median,zero")
    out = tmp_path / "r.json"
    call_command(
        "evaluate_wait", "--swf", str(path), "--methods", "median,zero",
        "--simulate-waits", "--json", str(out),
    )  # fmt: skip
    result = json.loads(out.read_text())
    assert result["zero"]["jobs"] == result["median"]["jobs"] > 400
