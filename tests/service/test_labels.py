"""Run parameters as labelled values with units, never a dict literal."""

from __future__ import annotations

import pytest

from predictor.core.runtime.params import RuntimeParams
from predictor.models import EvaluationRun
from queuecast.labels import param_rows
from queuecast.longrun import Status
from tests.service.test_predict_pages import trace, words  # noqa: F401


def as_dict(rows: list[dict[str, str]]) -> dict[str, str]:
    return {r["label"]: r["value"] for r in rows}


def test_values_carry_their_units() -> None:
    rows = as_dict(param_rows({
        "tune_fraction": 0.2, "limit": 1000, "machine_procs": 128.0, "elapsed_s": 7800.0,
        "simulate_waits": False, "threshold": 0.3, "grid": "none", "downey_a": None,
        "max_limit_s": None, "sigma": None,
    }))  # fmt: skip
    assert rows == {
        "Tuning part": "20% of the jobs",
        "Test jobs, at most": "1,000 jobs",
        "Machine size": "128 processors",
        "Took": "2 h 10 min",
        "Waits simulated where the log has none": "no",
        "Hold only when it saves more than": "30% of the response",
        "Sizes tried for a user without history": "only the size asked for (the seed's rule)",
        "Average parallelism A (downey)": "the size asked for",
        "Machine's time limit": "none given: the largest time limit asked so far",
        "Variance of parallelism σ (downey)": "–",
    }


def test_nested_settings_become_rows_and_unknown_keys_read_as_words() -> None:
    rows = param_rows({"params": RuntimeParams().as_dict(), "warm_up_s": 90, "odd_share": 0.5})
    text = " ".join(f"{r['label']} {r['value']}" for r in rows)
    assert "{" not in text and "'" not in text.replace("tuple's", "")
    values = as_dict(rows)
    assert values["rangeSet: Load history window"] == "7 d"
    assert values["rangeSet: Range upper end over lower end, at most"] == "1.2×"
    assert values["Warm up s"] == "1 min 30 s" and values["Odd share"] == "50%"


@pytest.mark.django_db
def test_the_runtime_evaluation_page_shows_no_dict_literal(browser, trace, alice) -> None:  # noqa: F811
    params = {"tune_fraction": 0.2, "machine_procs": 128.0, "params": RuntimeParams().as_dict()}
    result = {"rangeset": {"jobs": 3, "success_rate": 0.5}}
    run = EvaluationRun.objects.create(
        kind="runtime", trace=trace, owner=alice, status=Status.DONE, params=params, result=result
    )
    page = browser.get(f"/runs/evaluations/{run.pk}/").content.decode()
    table = words(page.split('id="run-params"')[1].split("</table>")[0])
    assert "{" not in table and "Load history window 7 d" in table
    assert "Machine size 128 processors" in table and "Tuning part 20% of the jobs" in table


def test_cpu_hours_classes_read_with_their_unit() -> None:
    from pyss_adapter.core.stats import cpu_hour_class_labels
    from queuecast.labels import cpu_hours_words

    assert [cpu_hours_words(c) for c in cpu_hour_class_labels()] == [
        "under 1 CPU-h",
        "1–10 CPU-h",
        "10–100 CPU-h",
        "100–1000 CPU-h",
        "1000 CPU-h or more",
    ]
