"""evaluate_runtime command and the runtime evaluation service on a small synthetic trace."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from predictor.core.runtime.registry import METHODS
from predictor.models import EvaluationRun
from predictor.services.runtime import run_runtime_evaluation
from tests.service.test_runtime_api import write_synthetic_swf
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


def test_command_prints_a_table_writes_json_and_stores_the_run(tmp_path, capsys) -> None:
    swf = write_synthetic_swf(tmp_path / "s.swf")
    out_json = tmp_path / "out.json"
    call_command("evaluate_runtime", swf=str(swf), limit=40, json=str(out_json))
    printed = capsys.readouterr().out
    assert "success" in printed and "coverage" in printed and "rangeset" in printed
    data = json.loads(out_json.read_text())
    assert set(data) == set(METHODS)
    for name, row in data.items():
        assert row["jobs"] == 40, name
        assert 0.0 <= row["success_rate"] <= 1.0
        assert row["coverage"] >= 0.0 and row["aae_s"] >= 0.0
    assert data["baseline"]["coverage"] == pytest.approx(1.0)
    run = EvaluationRun.objects.get()
    assert (run.kind, run.status) == ("runtime", "done")
    assert run.result["rangeset"]["success_rate"] == data["rangeset"]["success_rate"]
    assert run.params["n_targets"] == 40


def test_command_methods_and_settings_select_what_runs(tmp_path) -> None:
    swf = write_synthetic_swf(tmp_path / "s.swf")
    out_json = tmp_path / "out.json"
    call_command(
        "evaluate_runtime",
        swf=str(swf),
        methods="rangeset,tsafrir",
        limit=20,
        json=str(out_json),
        set=['shift="additive"', "compact_ratio=1.5"],
    )
    assert set(json.loads(out_json.read_text())) == {"rangeset", "tsafrir"}
    run = EvaluationRun.objects.get()
    assert run.params["params"]["shift"] == "additive"
    assert run.params["params"]["compact_ratio"] == 1.5


def test_command_rejects_unknown_methods_and_settings(tmp_path) -> None:
    swf = write_synthetic_swf(tmp_path / "s.swf")
    with pytest.raises(CommandError, match="unknown runtime methods"):
        call_command("evaluate_runtime", swf=str(swf), methods="rangeset,oracle")
    with pytest.raises(CommandError, match="NAME=VALUE"):
        call_command("evaluate_runtime", swf=str(swf), set=["nonsense=1"])
    with pytest.raises(CommandError):
        call_command("evaluate_runtime", swf=str(tmp_path / "missing.swf"))


def test_service_evaluates_a_stored_trace_run(tmp_path, settings) -> None:
    settings.QUEUECAST_UPLOAD_DIR = str(tmp_path / "uploads")
    trace = ingest_swf(write_synthetic_swf(tmp_path / "s.swf"), name="synth")
    run = EvaluationRun.objects.create(
        kind="runtime", trace=trace, methods=["rangeset", "baseline"], params={"limit": 30}
    )
    assert EvaluationRun.claim(run.pk)
    result = run_runtime_evaluation(run.pk)
    run.refresh_from_db()
    assert run.status == "done" and set(run.result) == {"rangeset", "baseline"}
    assert result["rangeset"]["jobs"] == 30
