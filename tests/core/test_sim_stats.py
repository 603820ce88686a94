"""Statistics observers: the all-jobs view, PySS's view and the utilisation series."""

from __future__ import annotations

import numpy as np
import pytest

from pyss_adapter.core.jobs import sim_jobs_from_arrays
from pyss_adapter.core.replay import replay_jobs
from pyss_adapter.core.stats import (
    all_jobs_view,
    distributions,
    pyss_selection,
    pyss_view,
    summarise,
    utilisation,
    utilisation_series,
)

BACKFILL = dict(
    submit_s=[0, 1, 2, 3], runtime_s=[100, 50, 50, 200], estimate_s=[100, 50, 50, 200],
    n_procs=[6, 8, 3, 1], machine_procs=10,
)  # fmt: skip


def _result(**kw):
    return replay_jobs(sim_jobs_from_arrays(**kw), "easy")


def test_all_jobs_view_means_over_every_job_in_seconds() -> None:
    view = all_jobs_view(_result(**BACKFILL))  # starts 0, 100, 2, 3
    assert view["view"] == "all jobs"
    assert view["mean_wait_s"] == pytest.approx(99 / 4)
    assert view["mean_response_s"] == pytest.approx((100 + 149 + 50 + 200) / 4)
    assert view["mean_bounded_slowdown"] == pytest.approx((1 + 149 / 50 + 1 + 1) / 4)
    assert view["utilisation"] == pytest.approx(1350 / (10 * 203))


def test_bounded_slowdown_uses_ten_seconds_for_short_jobs() -> None:
    result = _result(submit_s=[0, 0], runtime_s=[100, 2], estimate_s=[100, 2], n_procs=[1, 1],
                     machine_procs=1)  # fmt: skip
    # the 2 s job waits 100 s: (100 + 2) / max(2, 10)
    assert all_jobs_view(result)["mean_bounded_slowdown"] == pytest.approx((1 + 10.2) / 2)


def _pyss_print_statistics_selection(result) -> list[int]:
    """PySS's print_statistics loop, transcribed literally (the reference)."""
    jobs = result.jobs
    order = sorted(result.finish_order.tolist(), key=lambda j: result.end_s[j])
    size = len(order)
    percent = int(size / 100)
    chosen, counter = [], 0
    for j in order:
        counter += 1
        if jobs.estimate_s[j] == 1 and jobs.n_procs[j] == 1:
            size -= 1
            percent = int(size / 100)
            continue
        if size >= 100 and counter <= percent:
            continue
        if result.end_s[j] > jobs.submit_s.max():
            break
        chosen.append(j)
    return chosen


def test_pyss_selection_equals_pyss_loop_on_a_busy_random_trace() -> None:
    rng = np.random.default_rng(7)
    n = 600
    run = rng.integers(1, 500, n).astype(float)
    tiny = rng.random(n) < 0.2
    run[tiny] = 1
    procs = np.where(tiny, 1, rng.integers(1, 16, n))
    result = _result(
        submit_s=np.sort(rng.integers(0, 20_000, n)).astype(float), runtime_s=run,
        estimate_s=np.where(tiny, 1, run * 2), n_procs=procs, machine_procs=16,
    )  # fmt: skip
    expected = _pyss_print_statistics_selection(result)
    assert 100 < len(expected) < n
    assert pyss_selection(result).tolist() == expected


def test_pyss_view_skips_tiny_and_first_percent_and_reports_minutes() -> None:
    n = 300  # no waiting: 1-processor jobs every 10 s on a large machine
    tiny = np.arange(n) % 10 == 0
    result = _result(
        submit_s=np.arange(n) * 10.0, runtime_s=np.where(tiny, 1, 5),
        estimate_s=np.where(tiny, 1, 5),
        n_procs=np.ones(n, int), machine_procs=1000,
    )  # fmt: skip
    view = pyss_view(result)
    # job 1 is the first 1% (size 299 after the tiny job 0); job 299 ends after the
    # last submission; 29 more tiny jobs among 2..298.
    assert view["n_jobs"] == 297 - 29
    assert view["mean_wait_min"] == 0
    assert view["view"] == "pyss"


def test_utilisation_series_integrates_to_the_total_work() -> None:
    result = _result(**BACKFILL)
    series = utilisation_series(result, bin_s=30.0)
    util = np.array(series["utilisation"])
    assert util.max() <= 1.0 + 1e-9
    assert util.sum() * 10 * 30.0 == pytest.approx(1350)
    assert util[0] == pytest.approx((6 * 30 + 3 * 28 + 1 * 27) / 300)


def test_summarise_labels_both_views_and_describes_the_run() -> None:
    summary = summarise(_result(**BACKFILL))
    assert summary["all_jobs"]["view"] == "all jobs"
    assert summary["pyss"]["view"] == "pyss"
    assert summary["run"]["scheduler"] == "easy"
    assert summary["utilisation_series"]["bin_s"] == 1800.0
    assert utilisation(_result(**BACKFILL)) == summary["all_jobs"]["utilisation"]


def test_a_replay_without_jobs_has_empty_statistics() -> None:
    empty = dict(submit_s=[], runtime_s=[], estimate_s=[], n_procs=[], machine_procs=4)
    summary = summarise(_result(**empty))
    assert summary["all_jobs"]["n_jobs"] == 0
    assert summary["all_jobs"]["mean_wait_s"] is None
    assert summary["pyss"]["n_jobs"] == 0
    assert summary["utilisation_series"]["utilisation"] == []


def test_distributions_count_waits_and_average_response_per_cpu_hours_class() -> None:
    # BACKFILL starts 0, 100, 2, 3: waits 0, 99, 0, 0 s; every job under 1 CPU-hour
    out = distributions(_result(**BACKFILL))
    hist = out["wait_histogram"]
    waits = dict(zip(hist["labels"], hist["values"], strict=True))
    assert waits["0"] == 3 and waits["< 10 min"] == 1 and sum(waits.values()) == 4
    response = out["response_by_cpu_hours"]
    assert response["labels"][0] == "<1" and response["values"][0] == pytest.approx(499 / 4)
    assert response["values"][1:] == [None] * 4
    big = _result(submit_s=[0], runtime_s=[7200], estimate_s=[7200], n_procs=[8], machine_procs=8)
    assert distributions(big)["response_by_cpu_hours"]["values"][2] == pytest.approx(7200)
