"""Broker mode: SIGKILL the Celery pool child mid-ingest and mid-evaluation (CI: Redis +
PostgreSQL). ``acks_late`` + ``reject_on_worker_lost`` put the message back, the next child
finds the lease's process gone, takes the row over and runs it again: the row ends done,
never running.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from predictor.models import EvaluationRun
from queuecast.longrun import enqueue
from queuecast.models import RunLease
from tests.service.traces_support import make_user
from tests.worker_support import REAL_WORKER_MARKS, celery_worker, wait_until_over
from traces.models import Job, Trace

pytestmark = REAL_WORKER_MARKS
N_JOBS = 80_000
TIMEOUT_S = 180


@pytest.fixture
def prefork_worker(tmp_path, settings):
    """``celery worker -P prefork -c 1`` on a private queue (a pool child does the work)."""
    with celery_worker(tmp_path, settings, "prefork") as log:
        yield log


def big_upload(path) -> str:
    rows = (
        f"{n} {n * 7} {n % 600} {60 + n % 3600} {1 + n % 32} -1 -1 {1 + n % 32} 7200 -1 1 "
        f"{n % 50} 1 -1 1 -1 -1 -1"
        for n in range(1, N_JOBS + 1)
    )
    path.write_text("; Version: 2.2\n; MaxProcs: 128\n" + "\n".join(rows) + "\n")
    return str(path)


def kill_the_child_holding(model, pk: int) -> int:
    """Wait for the row's lease, SIGKILL the process it names; returns that pid."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        lease = RunLease.objects.filter(run_label=model._meta.label_lower, run_id=pk).first()
        if lease is not None:
            pid = int(lease.worker.rsplit(":", 2)[1])
            os.kill(pid, signal.SIGKILL)
            return pid
        time.sleep(0.02)
    pytest.fail("the run was never claimed")


@pytest.mark.django_db(transaction=True)
def test_a_killed_pool_child_mid_ingest_is_run_again_to_done(prefork_worker, tmp_path) -> None:
    trace = Trace.objects.create(
        name="big", owner=make_user("alice"), upload_path=big_upload(tmp_path / "big.swf")
    )
    enqueue(trace, "traces.tasks.ingest_trace")
    killed = kill_the_child_holding(Trace, trace.pk)
    trace = wait_until_over(Trace, trace.pk, TIMEOUT_S)
    log = prefork_worker.read_text(errors="replace")[-3000:]
    assert trace.status == "done", f"{trace.status} ({trace.error}); worker log:\n{log}"
    assert Job.objects.filter(trace=trace).count() == N_JOBS
    assert f"{killed}" not in RunLease.objects.values_list("worker", flat=True)


@pytest.mark.django_db(transaction=True)
def test_a_killed_pool_child_mid_evaluation_is_run_again(prefork_worker, tmp_path) -> None:
    from traces.services import ingest_swf

    alice = make_user("alice")
    trace = ingest_swf(big_upload(tmp_path / "big.swf"), name="big", owner=alice)
    run = EvaluationRun.objects.create(kind="wait", owner=alice, trace=trace, methods=["median"])
    enqueue(run, "predictor.tasks_wait.run_evaluation")
    kill_the_child_holding(EvaluationRun, run.pk)
    run = wait_until_over(EvaluationRun, run.pk, TIMEOUT_S)
    log = prefork_worker.read_text(errors="replace")[-3000:]
    assert run.status in ("done", "failed") and run.status != "running", log
    assert run.status == "done", f"{run.error}; worker log:\n{log}"
