"""placement_experiment prints each table with the seed's figure and a verdict per row."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from django.core.management import call_command

# job submit wait run procs cpu mem req_procs req_time req_mem status user (+6 fields)
ROWS = [(i, 60 * i, 0, 600 + 37 * i, 1 + i % 6, (300 + 37 * i) / 1, -1, 1 + i % 6, 3600, -1, 1,
         i % 3) for i in range(1, 41)]  # fmt: skip


def _swf(tmp_path: Path) -> str:
    path = tmp_path / "small.swf.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("; MaxProcs: 16\n; MaxNodes: 16\n")
        for r in ROWS:
            fh.write(" ".join(str(v) for v in r) + " -1 -1 -1 -1 -1 -1\n")
    return str(path)


def _run(tmp_path: Path, *args: str) -> tuple[str, dict]:
    out, js = io.StringIO(), tmp_path / "out.json"
    call_command("placement_experiment", *args, "--json", str(js), stdout=out)
    return out.getvalue(), json.loads(js.read_text())


def test_t1_on_any_swf_file_gives_a_row_per_policy_with_a_verdict(tmp_path: Path) -> None:
    text, data = _run(tmp_path, "T1", _swf(tmp_path), "--k", "1", "--models", "constant")
    assert len(data["rows"]) == 10
    assert data["rows"][0]["verdict"] == "baseline"
    assert all(r["verdict"] for r in data["rows"])
    assert "whole logs" in data["title"] and "| least-allocated |" in text


def test_c1_rows_carry_the_seed_figure_and_the_overload_flag(tmp_path: Path) -> None:
    _, data = _run(tmp_path, "C1", _swf(tmp_path), "--k", "2", "--b0", "zero", "--jobs", "30")
    labels = [r["policy"] for r in data["rows"]]
    assert labels[0] == "off (EMR)" and "cash whole_first" in labels
    assert {r["overloaded"] for r in data["rows"]} <= {"yes", "no"}
    assert "first 30 jobs" in data["title"]
    off = data["rows"][0]
    assert off["degradation"] == 0 and off["verdict"] == "reference"


def test_c2_says_why_it_is_not_run(tmp_path: Path) -> None:
    text, data = _run(tmp_path, "C2")
    assert all(r["verdict"] == "untestable" for r in data["rows"])
    assert "SWF has no I/O" in text


def test_g1_source_naming_its_rho_draws_only_that_rho(tmp_path: Path) -> None:
    path = tmp_path / "long.swf.gz"
    with gzip.open(path, "wt") as fh:  # 30 jobs of >= 2 h with field 6: the item pool
        for i in range(1, 31):
            run = 7200 + 60 * i
            fh.write(f"{i} {60 * i} 0 {run} 1 {run * (0.3 + i / 50)} -1 1 9000 -1 1 {i % 3}")
            fh.write(" -1 -1 -1 -1 -1 -1\n")
    args = ("G1", str(path), str(path), "--sources", "gauss 0.1", "--instances", "2")
    _, data = _run(tmp_path, *args, "--realisations", "50", "--grid", "base")
    assert {r["source"] for r in data["rows"]} == {"gauss 0.1"}
    assert "R = 50 for the SWF sources;" in data["title"] and "azure" not in data["title"]
    assert len(data["rows"]) == 16 and all(r["verdict"] for r in data["rows"])
