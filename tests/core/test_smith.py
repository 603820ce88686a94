"""Smith-Foster-Taylor templates: category mean and 90 % CI, smallest interval, greedy search."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from predictor.core.runtime.history import build_context
from predictor.core.runtime.smith import SmithTemplates, Template, attribute_frame, choose
from predictor.core.runtime.targets import RuntimeTargets
from tests.core.test_load import make_jobs


def user_template(ctx, row: int) -> tuple[np.ndarray, np.ndarray]:
    """The user template's mean and CI width for log row ``row`` at its arrival."""
    every = RuntimeTargets.from_rows(ctx, np.arange(len(ctx.run_s)))
    attrs = attribute_frame(every.requests)
    return Template(attrs, ("user_id",), ctx).stats(RuntimeTargets.from_rows(ctx, [row]), attrs)


def test_template_stats_give_the_mean_and_90_percent_interval() -> None:
    jobs = make_jobs(
        [{"submit_time": i, "run_time": r} for i, r in enumerate([10, 20, 30])]
        + [{"submit_time": 100, "run_time": 5}]
    )
    ctx = build_context(jobs, 8, n_tune=1)
    mean, width = user_template(ctx, 3)
    assert mean[0] == pytest.approx(20.0)
    expected = 2 * stats.t.ppf(0.95, 2) * 10 / np.sqrt(3)
    assert width[0] == pytest.approx(expected)


def test_a_category_of_one_job_gives_no_interval() -> None:
    jobs = make_jobs([{"submit_time": 0, "run_time": 10}, {"submit_time": 100, "run_time": 5}])
    ctx = build_context(jobs, 8, n_tune=1)
    _, width = user_template(ctx, 1)
    assert np.isinf(width[0])


def test_choose_takes_the_smallest_interval_else_the_fallback() -> None:
    means = np.array([[10.0, 1.0], [20.0, 2.0]])
    widths = np.array([[5.0, np.inf], [1.0, np.inf]])
    assert choose(means, widths, np.array([7.0, 7.0])).tolist() == [20.0, 7.0]


def test_greedy_search_finds_the_template_that_separates_users() -> None:
    rows = []
    for i in range(80):
        user = 1 + i % 2
        rows.append(
            {
                "submit_time": 100 * i,
                "run_time": 50 if user == 1 else 5000,
                "user_id": user,
                "group_id": 1,
                "requested_time": 9000,
            }
        )
    ctx = build_context(make_jobs(rows), 8, n_tune=60)
    model = SmithTemplates().fit(ctx)
    assert any("user_id" in t for t in model.templates_)
    points = model.points(RuntimeTargets.from_rows(ctx, np.array([70, 71])), None)
    np.testing.assert_allclose(points, [50, 5000])
