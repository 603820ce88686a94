"""evaluate_molding and the molding API on small hand-made logs (no whole-trace runs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from django.db.migrations.recorder import MigrationRecorder

from jobmolding.models import MoldingRun
from predictor.services.predict import service_methods
from queuecast.longrun import Status
from tests.service.traces_support import api_for, make_user
from traces.core.swf import SWF_FIELDS, SwfTrace, write_swf
from traces.core.swf_header import SwfHeader
from traces.models import Trace
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db

FIGURES = {
    "jobs", "mean_wait_s", "mean_run_s", "mean_response_s", "median_response_s",
    "mean_bounded_slowdown", "utilisation", "molded_share", "delayed_share", "mean_delay_s",
}  # fmt: skip


def small_log(n: int = 160, seed: int = 5, users: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = pd.DataFrame(-1, index=range(n), columns=list(SWF_FIELDS), dtype=np.int64)
    run = rng.integers(10, 1500, size=n)
    out["job_id"] = np.arange(1, n + 1)
    out["submit_time"] = np.cumsum(rng.integers(0, 400, size=n))
    out["wait_time"] = rng.integers(0, 100, size=n)
    out["run_time"] = run
    out["allocated_procs"] = out["requested_procs"] = rng.choice([1, 2, 4, 8, 16], size=n)
    out["requested_time"] = run * rng.integers(1, 4, size=n)
    out["user_id"] = rng.integers(1, 5, size=n) if users else -1
    out["group_id"] = out["queue_id"] = 1
    return out


def swf_file(tmp_path: Path, name: str = "small.swf", **kw) -> Path:
    path = tmp_path / name
    write_swf(SwfTrace(header=SwfHeader(max_procs=16), jobs=small_log(**kw)), path)
    return path


def test_command_writes_json_and_plots_and_stores_the_run(tmp_path: Path) -> None:
    out, plots = tmp_path / "out.json", tmp_path / "plots"
    call_command(
        "evaluate_molding", "--swf", str(swf_file(tmp_path)), "--json", str(out),
        "--plots", str(plots), "--tune-fraction", "0.3",
    )  # fmt: skip
    result = json.loads(out.read_text())
    assert set(result) == {"baseline", "molding", "delay", "params"}
    for name in ("baseline", "molding", "delay"):
        assert FIGURES <= set(result[name])
        assert set(result[name]["by_cpu_hours"]) == {"<1", "1-10", "10-100", "100-1000", ">=1000"}
    assert result["baseline"]["molded_share"] == 0.0
    assert result["params"]["runtime_model"] == "downey" and result["params"]["seed"] == 0
    # by default the live service's own methods (the suite's: apq and rangeset), named as it
    # names them; no replay-native substitute
    params = result["params"]
    assert (params["wait_method"], params["runtime_method"]) == ("apq", "rangeset")
    assert (params["live_wait_method"], params["live_runtime_method"]) == ("apq", "rangeset")
    assert params["same_methods_as_live"] is True
    assert params["decision"] == "jobmolding.core.arrival.decide_arrival"
    assert "predictor" not in params
    assert result["molding"]["guard"]["chosen_on"] == "tuning part"
    assert {"work_ratio", "guard"} <= set(result["delay"])
    for name in ("load", "response_by_class", "sizes"):
        png = (plots / f"{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) < 150_000
    run = MoldingRun.objects.get()
    assert run.status == Status.DONE and run.result["molding"] == result["molding"]
    assert "plot_data" in run.result


def test_same_seed_gives_the_same_figures(tmp_path: Path) -> None:
    path = swf_file(tmp_path)
    outs = []
    for k in range(2):
        out = tmp_path / f"o{k}.json"
        call_command("evaluate_molding", "--swf", str(path), "--strategies", "molding",
                     "--json", str(out))  # fmt: skip
        outs.append(json.loads(out.read_text())["molding"])
    for row in outs:
        for key in ("seconds", "cpu_seconds", "predictions_per_cpu_s"):
            row.pop(key)
    assert outs[0] == outs[1]


def test_a_replay_can_decide_with_the_live_services_methods_and_says_which_it_used(
    tmp_path: Path, settings, capsys
) -> None:
    """``auto`` waits and the runtime method chosen on the tuning part (``choose``: what the
    live service answers with) decide a replay like any registered method; ``params`` says
    whether the replay's methods are the live service's (they are by default), and ``sim``
    says it is not."""
    del settings.QUEUECAST_SERVICE_WAIT_METHOD  # the service's own defaults, not the suite's
    del settings.QUEUECAST_SERVICE_RUNTIME_METHOD
    path = swf_file(tmp_path, n=400)
    out = tmp_path / "live.json"
    call_command("evaluate_molding", "--swf", str(path), "--strategies", "baseline,molding",
                 "--json", str(out), "--tune-fraction", "0.3")  # fmt: skip
    params = json.loads(out.read_text())["params"]
    assert (params["wait_method"], params["runtime_method"]) == ("auto", "choose")
    assert params["same_methods_as_live"] is True
    assert "proves the decision code" not in capsys.readouterr().out
    out = tmp_path / "sim.json"
    call_command("evaluate_molding", "--swf", str(path), "--strategies", "molding",
                 "--wait-method", "sim", "--json", str(out), "--tune-fraction", "0.3")  # fmt: skip
    params = json.loads(out.read_text())["params"]
    assert params["same_methods_as_live"] is False
    assert (params["live_wait_method"], params["live_runtime_method"]) == ("auto", "choose")
    assert "the live service answers with wait auto and runtime choose" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--strategies", "baseline,best"], "--strategies"),
        (["--runtime-model", "amdahl"], "--runtime-model"),
        (["--tune-fraction", "1.0"], "--tune-fraction"),
        (["--tune-fraction", "0"], "--tune-fraction"),
        (["--sigma", "-1"], "--sigma"),
        (["--wait-method", "nope"], "--wait-method: wait_method must be one of .*auto"),
        (["--runtime-method", "nope"], "--runtime-method"),
        (["--guard", "2"], "--guard"),
        (["--guard", "some"], "--guard"),
        (["--work-limit", "0.5"], "--work-limit: work_limit must be >= 1"),
    ],
)
def test_bad_arguments_name_the_argument_and_store_nothing(tmp_path, args, named) -> None:
    with pytest.raises(CommandError, match=named):
        call_command("evaluate_molding", "--swf", str(swf_file(tmp_path)), *args)
    assert not MoldingRun.objects.exists()


def test_a_log_without_user_ids_is_refused_saying_why(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    with pytest.raises(CommandError, match="user history"):
        call_command("evaluate_molding", "--swf", str(swf_file(tmp_path, users=False)),
                     "--json", str(out))  # fmt: skip
    assert not MoldingRun.objects.exists() and not out.exists()


@pytest.fixture
def stored(alice, tmp_path) -> Trace:
    return ingest_swf(swf_file(tmp_path), name="small-molding", owner=alice)


def test_api_runs_a_molding_evaluation_and_serves_its_plots(
    alice, stored, django_capture_on_commit_callbacks
) -> None:
    client = api_for(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/traces/{stored.pk}/molding-runs/",
            {"strategies": ["baseline", "delay"], "runtime_model": "downey", "tune_fraction": 0.3},
            format="json",
        )
    assert response.status_code == 202 and response["Location"] == response.data["url"]
    body = client.get(response.data["url"]).data
    assert body["status"] == Status.DONE and body["progress"] == 1.0
    assert set(body["result"]) == {"baseline", "delay", "params"}
    assert body["result"]["params"]["runtime_model"] == "downey"
    # no method asked for: the live service's own, stored on the row and named in params
    assert (body["wait_method"], body["runtime_method"]) == service_methods()
    assert body["result"]["params"]["same_methods_as_live"] is True
    assert "plot_data" not in body["result"]
    # which sizes "choose the size" tried: one record per evaluated job, the log's sizes only
    tried, delay = body["result"]["delay"]["candidates"], body["result"]["delay"]
    assert tried["decisions"] == delay["jobs"] and "candidates" not in body["result"]["baseline"]
    assert {s["procs"] for s in tried["sizes"]} <= {1, 2, 4, 8, 16}
    total = sum(s["decisions"] for s in tried["sizes"])
    assert total == pytest.approx(tried["mean_candidates"] * tried["decisions"])
    image = client.get(body["plots"]["load"])
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert image.content.startswith(b"\x89PNG")
    missing = client.get(body["url"].rstrip("/") + "/plots/pie")
    assert missing.status_code == 404
    assert [r["id"] for r in client.get("/api/molding-runs/").data["results"]] == [body["id"]]


def test_api_runs_decide_with_the_methods_asked_for(
    alice, stored, django_capture_on_commit_callbacks
) -> None:
    """A run started over the API decides with the wait and runtime methods it names (the
    command's ``--wait-method`` and ``--runtime-method``); the row and the result say which,
    and whether they are the live service's."""
    client = api_for(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/traces/{stored.pk}/molding-runs/",
            {"strategies": ["baseline", "molding"], "tune_fraction": 0.3,
             "wait_method": "median", "runtime_method": "choose"},
            format="json",
        )  # fmt: skip
    assert response.status_code == 202
    body = client.get(response.data["url"]).data
    assert body["status"] == Status.DONE, body["error"]
    assert (body["wait_method"], body["runtime_method"]) == ("median", "choose")
    params = body["result"]["params"]
    assert (params["wait_method"], params["runtime_method"]) == ("median", "choose")
    assert params["same_methods_as_live"] is False
    old = MoldingRun.objects.create(trace=stored, owner=alice)  # a row from before the fields
    assert (old.wait_method, old.runtime_method) == ("sim", "rangeset")


def test_api_requires_login_keeps_runs_private_and_rejects_bad_input(alice, stored) -> None:
    url = f"/api/traces/{stored.pk}/molding-runs/"
    assert api_for(None).post(url, {}, format="json").status_code in (401, 403)
    client = api_for(alice)
    for body, field in (({"tune_fraction": 1.0}, "tune_fraction"),
                        ({"runtime_model": "amdahl"}, "runtime_model"),
                        ({"wait_method": "oracle"}, "wait_method"),
                        ({"runtime_method": "oracle"}, "runtime_method"),
                        ({"strategies": ["best"]}, "strategies")):  # fmt: skip
        response = client.post(url, body, format="json")
        assert response.status_code == 400 and field in response.data
    assert not MoldingRun.objects.exists()
    run = MoldingRun.objects.create(trace=stored, owner=alice)
    bob = api_for(make_user("bob"))
    assert bob.get(f"/api/molding-runs/{run.pk}/").status_code == 404
    assert bob.get("/api/molding-runs/").data["results"] == []


def test_ctrl_c_leaves_no_partial_file_and_no_row(tmp_path: Path, monkeypatch) -> None:
    from jobmolding.management.commands import evaluate_molding as command

    out, plots = tmp_path / "out.json", tmp_path / "plots"
    calls = []

    def interrupted(result, name):
        calls.append(name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return b"\x89PNG whole"

    monkeypatch.setattr(command, "plot_png", interrupted)
    with pytest.raises(KeyboardInterrupt):
        call_command("evaluate_molding", "--swf", str(swf_file(tmp_path)), "--strategies",
                     "baseline", "--json", str(out), "--plots", str(plots))  # fmt: skip
    assert not out.exists() and not MoldingRun.objects.exists()
    assert [p.name for p in plots.iterdir()] == ["load.png"]  # whole, no temporary left
    assert (plots / "load.png").read_bytes() == b"\x89PNG whole"


def test_command_refuses_to_start_on_a_database_behind_the_code(tmp_path: Path) -> None:
    """It stores the run at its end: an unmigrated database is said before any work, not
    found by a traceback after a long replay."""
    MigrationRecorder.Migration.objects.filter(app="jobmolding").delete()  # rolled back after
    out = tmp_path / "out.json"
    with pytest.raises(CommandError, match=r"of jobmolding.*run `python manage.py migrate`"):
        call_command("evaluate_molding", "--swf", str(swf_file(tmp_path)), "--json", str(out))
    assert not out.exists() and MoldingRun.objects.count() == 0
