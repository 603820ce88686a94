"""One end-to-end ingest through a real Celery worker, Redis and PostgreSQL (CI).

The worker is a subprocess; it must see the rows this test commits, so the test
runs on a transactional database and hands the worker the *test* database's
name (pytest-django's ``test_<name>``), plus its own queue so that no other
worker on the same Redis picks the message up.
"""

from __future__ import annotations

import pytest

from tests.service.traces_support import SMALL, SMALL_JOBS, api_for, make_user, post_trace
from tests.worker_support import REAL_WORKER_MARKS, celery_worker, wait_until_over
from traces.models import Job, Trace

pytestmark = REAL_WORKER_MARKS
TIMEOUT_S = 90


@pytest.fixture
def worker(tmp_path, settings):
    """A ``celery worker -P solo`` subprocess on a private queue; yields its log path."""
    with celery_worker(tmp_path, settings, "solo", ("--without-heartbeat",)) as log:
        yield log


@pytest.mark.django_db(transaction=True)
def test_real_worker_ingests_an_upload_end_to_end(worker) -> None:
    response = post_trace(api_for(make_user("alice")), SMALL, name="via-worker")
    assert response.status_code == 202
    trace = wait_until_over(Trace, response.data["id"], TIMEOUT_S)
    log = worker.read_text(errors="replace")
    log_tail = log[-3000:]
    assert trace.status == "done", (
        f"trace is {trace.status} ({trace.error}); worker log:\n{log_tail}"
    )
    assert trace.job_count == SMALL_JOBS == Job.objects.filter(trace=trace).count()
    assert "traces.tasks.ingest_trace" in log, f"the worker did not run the task:\n{log_tail}"
