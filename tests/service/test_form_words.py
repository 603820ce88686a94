"""Form errors in the unit the user typed: days after the trace start, durations."""

from __future__ import annotations

import pytest

from predictor.pages.predict import in_form_words, span_days
from tests.service.test_predict_pages import ask, trace, words  # noqa: F401

pytestmark = pytest.mark.django_db


def test_an_instant_past_the_trace_is_refused_in_days(browser, trace) -> None:  # noqa: F811
    page = words(ask(browser, trace, at_days=99999).content.decode())
    span = span_days(trace)
    assert 0 < span < 99999
    assert f"must lie within the trace: between 0 and {span:g} days after its start" in page
    assert "e+0" not in page and "Answer for" not in page


def test_api_errors_on_the_time_limit_read_as_durations(trace) -> None:  # noqa: F811
    field, errors = in_form_words(trace, "requested_time", ["at most 3.1536e+07 s"])
    assert (field, errors) == ("time_limit", ["at most 1 y"])
    field, errors = in_form_words(trace, "at", ["must lie in the trace's span [0, 4.6e+06] s"])
    assert field == "at_days" and errors[0].endswith("days after its start")
