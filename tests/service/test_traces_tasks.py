"""The ingest task: claims its row, survives crashes and duplicate deliveries."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.utils import timezone

from queuecast.heartbeat import worker_id
from queuecast.longrun import Status
from queuecast.models import RunLease
from tests.service.traces_support import SMALL, SMALL_JOBS, make_user
from traces.models import Job, Trace
from traces.services import bulkload
from traces.tasks import ingest_trace

pytestmark = pytest.mark.django_db


@pytest.fixture
def pending(tmp_path) -> Trace:
    """A row as POST leaves it: pending, its upload on disk."""
    upload = shutil.copy(SMALL, tmp_path / "trace-upload.swf")
    return Trace.objects.create(
        name="pending", owner=make_user("alice"), status=Status.PENDING, upload_path=str(upload)
    )


def crash_after_first_rows(monkeypatch) -> None:
    """Insert some job rows, then die, as a worker killed mid-COPY would."""
    real = bulkload.insert_jobs

    def insert_then_crash(trace_id, jobs, progress=None):
        real(trace_id, jobs.iloc[:5], progress)
        assert Job.objects.filter(trace_id=trace_id).count() == 5  # rows were written...
        raise RuntimeError("worker killed")

    monkeypatch.setattr(bulkload, "insert_jobs", insert_then_crash)
    monkeypatch.setattr("traces.services.ingest.insert_jobs", insert_then_crash)


def test_task_ingests_the_pending_row_it_was_given(pending) -> None:
    assert ingest_trace.delay(pending.pk).get() == Status.DONE
    pending.refresh_from_db()
    assert (pending.status, pending.job_count, pending.progress) == (Status.DONE, SMALL_JOBS, 1.0)


def test_crash_mid_ingest_leaves_no_job_and_a_failed_trace_with_the_reason(
    pending, monkeypatch
) -> None:
    crash_after_first_rows(monkeypatch)
    assert ingest_trace.delay(pending.pk).get() == Status.FAILED
    pending.refresh_from_db()
    assert pending.status == Status.FAILED
    assert "RuntimeError: worker killed" in pending.error
    assert not Job.objects.exists()  # ...and went away with the transaction


def test_redelivery_reclaims_a_row_left_running_by_a_killed_worker(pending) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a worker process that is gone, on this host
    Trace.objects.filter(pk=pending.pk).update(
        status=Status.RUNNING, progress=0.4, started_at=timezone.now()
    )
    RunLease.objects.create(
        run_label="traces.trace", run_id=pending.pk, token="t1", worker=worker_id(dead.pid)
    )
    assert ingest_trace.delay(pending.pk).get() == Status.DONE
    assert Job.objects.filter(trace=pending).count() == SMALL_JOBS
    assert not RunLease.objects.exists()


def test_redelivery_leaves_a_row_whose_worker_is_alive_to_that_worker(pending) -> None:
    Trace.objects.filter(pk=pending.pk).update(
        status=Status.RUNNING, progress=0.4, started_at=timezone.now()
    )
    RunLease.objects.create(
        run_label="traces.trace", run_id=pending.pk, token="t1", worker=worker_id()
    )
    assert ingest_trace.delay(pending.pk).get() == "skipped"
    assert Trace.objects.get(pk=pending.pk).status == Status.RUNNING


def test_duplicate_delivery_of_a_finished_trace_does_nothing(pending) -> None:
    ingest_trace.delay(pending.pk).get()
    assert ingest_trace.delay(pending.pk).get() == "skipped"
    assert Job.objects.filter(trace=pending).count() == SMALL_JOBS


def test_task_for_a_deleted_trace_does_nothing(pending) -> None:
    pending.delete()
    assert ingest_trace.delay(pending.pk).get() == "skipped"


def test_missing_upload_fails_the_trace_with_the_reason(pending) -> None:
    Trace.objects.filter(pk=pending.pk).update(upload_path="/nonexistent/trace.swf")
    ingest_trace.delay(pending.pk).get()
    pending.refresh_from_db()
    assert pending.status == Status.FAILED and "uploaded file is gone" in pending.error


def test_upload_file_is_removed_after_the_ingest(pending) -> None:
    assert Path(pending.upload_path).is_file()
    ingest_trace.delay(pending.pk).get()
    assert not Path(pending.upload_path).exists()
