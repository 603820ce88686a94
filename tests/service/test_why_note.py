"""The ``why`` block beside a predicted wait that its queue does not explain: a page must not
show "starts at once" beside a wait of hours, or "starts in 3 h" beside 5 minutes, without
saying why (``predictor.services.why.estimate_note``)."""

from __future__ import annotations

from predictor.core.state.request import JobRequest
from predictor.core.state.snapshot import LiveJob, from_live
from predictor.services.why import why_body
from tests.core.wait_fakes import make_jobs

NOW = 1_000_000.0


def _snapshot(queue: bool):
    """100 processors; 60 run until NOW + 1 h; with ``queue``, 80 wait (1 h limit) ahead."""
    live = [LiveJob(JobRequest(user=1, procs=60, req_time_s=3600, submit_s=NOW - 10, job_id=1),
                    "running", start_s=NOW)]  # fmt: skip
    if queue:
        live.append(LiveJob(JobRequest(user=1, procs=80, req_time_s=3600, submit_s=NOW - 5,
                                       job_id=2), "waiting"))  # fmt: skip
    return from_live(live, NOW, make_jobs(50), machine_procs=100)


def _why(queue: bool, procs: int, **kw):
    request = JobRequest(user=2, procs=procs, req_time_s=1800, submit_s=NOW)
    return why_body(None, _snapshot(queue), request, **kw)  # every job has a time limit


def test_a_job_that_fits_at_once_beside_a_wait_of_hours_says_where_the_hours_come_from():
    why = _why(False, 10, headline_wait_s=6 * 3600.0)
    assert why["predicted_start_s"] == 0 and why["reason"] == "nothing"
    assert why["sentence"].startswith("It starts at once: 40 processors are free and it fits.")
    assert "The predicted wait, 6 h, is longer: jobs like it have waited" in why["sentence"]
    assert why["estimate_note"] in why["sentence"]
    assert why["sooner"]["sentence"].startswith("Nothing in the queue holds it back")


def test_a_queue_start_longer_than_the_predicted_wait_says_jobs_end_before_their_limits():
    why = _why(True, 50, headline_wait_s=300.0)
    assert why["reason"] == "jobs_ahead" and why["predicted_start_s"] == 7200
    assert why["estimate_note"] == (
        "The predicted wait, 5 min, is shorter: most jobs end before their time limits, "
        "which this simulation does not assume."
    )


def test_close_figures_or_no_headline_add_nothing():
    assert _why(False, 10, headline_wait_s=200.0)["estimate_note"] is None  # under 5 min
    assert _why(True, 50, headline_wait_s=6000.0)["estimate_note"] is None  # within 25%
    plain = _why(False, 10)
    assert plain["estimate_note"] is None
    assert plain["sentence"] == "It starts at once: 40 processors are free and it fits."
    assert plain["sooner"]["sentence"] == "Nothing to change: it starts at once."


def test_a_headline_longer_because_of_another_figure_than_the_history_makes_no_claim():
    why = _why(False, 10, headline_wait_s=7200.0, history_wait_s=600.0)
    assert why["estimate_note"] == "The predicted wait, 2 h, is longer."
