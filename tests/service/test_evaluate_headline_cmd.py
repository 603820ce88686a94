"""evaluate_headline prints every headline rule, the old site's answer and the rule chosen
online on a log's test part, and writes the same figures as JSON."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from jobmolding.core.headline import RULES
from tests.core.wait_fakes import make_jobs
from traces.core.swf import format_jobs


def test_evaluate_headline_prints_every_rule_and_the_online_choice(tmp_path: Path) -> None:
    path = tmp_path / "small.swf"
    path.write_text("; MaxProcs: 128\n" + format_jobs(make_jobs(300)))
    out, figures, kept_jobs = StringIO(), tmp_path / "h.json", tmp_path / "h.npz"
    call_command("evaluate_headline", swf=str(path), rule_jobs=30, block=40, json=str(figures),
                 save=str(kept_jobs), stdout=out)  # fmt: skip
    text = out.getvalue()
    for name in [*RULES, "later, history pool (before)", "chosen online", "always zero"]:
        assert f"| {name} | " in text
    saved = json.loads(figures.read_text(), parse_constant=lambda c: 1 / 0)  # strict JSON
    assert saved["test_jobs"] == 300 - 60 and sum(saved["kept"].values()) == saved["test_jobs"]
    mae = {r["name"]: r["mae_s"] for r in saved["rules"]}
    assert mae["later, history pool (before)"] == mae["later"]  # same points, another pool
    kept = saved["kept"]
    if len(kept) == 1:  # one rule all along: the online row is that rule's
        assert mae["chosen online"] == mae[next(iter(kept))]
    assert f"| chosen online | {mae['chosen online']:,.0f} |" in text
    # the kept answers score the same again, without fitting or answering
    again = StringIO()
    call_command("evaluate_headline", load=str(kept_jobs), rule_jobs=30, block=40, stdout=again)
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table == [line for line in again.getvalue().splitlines() if line.startswith("|")]
    assert "fitting" not in again.getvalue()
