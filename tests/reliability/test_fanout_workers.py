"""Broker mode with real Celery workers: an evaluation run's chunks are answered by several
pool processes (``predictor.services.fanout``) and the result equals the in-process one (CI: Redis +
PostgreSQL)."""

from __future__ import annotations

import time

import pytest

from predictor.models import EvaluationChunk, EvaluationRun
from predictor.services import evaluations
from queuecast.longrun import enqueue
from tests.service.test_evaluate_wait_cmd import write_trace
from tests.service.traces_support import make_user
from tests.worker_support import REAL_WORKER_MARKS, celery_worker
from traces.core.swf import read_swf

pytestmark = REAL_WORKER_MARKS
TIMEOUT_S = 300


@pytest.mark.django_db(transaction=True)
def test_two_pool_processes_answer_the_chunks_and_the_result_is_unchanged(
    tmp_path, settings
) -> None:
    swf = write_trace(tmp_path / "t.swf", n=3000, seed=11)
    params = {"seed": 0, "limit": 1600}
    run = evaluations.new_run(
        kind="wait", owner=make_user("alice"), swf_path=str(swf), methods=["apq", "qbets"],
        params=params,
    )  # fmt: skip
    env = {"QUEUECAST_EVAL_CHUNK_ROWS": "100"}
    with celery_worker(tmp_path, settings, "prefork", env=env, concurrency=2) as log:
        enqueue(run, "predictor.tasks_wait.run_evaluation")
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            run.refresh_from_db()
            if run.status in ("done", "failed"):
                break
            time.sleep(0.5)
        worker_log = log.read_text(errors="replace")[-3000:]
    assert run.status == "done", f"{run.status} ({run.error}); worker log:\n{worker_log}"
    fan = run.params["fanout"]
    assert fan["chunks"] == 2 * 16  # 1600 targets, 100 a chunk, two methods
    assert sum(fan["workers"].values()) == 32
    assert len(fan["workers"]) == 2, (fan, worker_log)  # both pool processes answered chunks
    truth = evaluations.evaluate_swf(read_swf(str(swf)), ["apq", "qbets"], params).results
    for name in truth:
        for key in ("aae_s", "jobs", "correct_share"):
            assert run.result[name][key] == truth[name][key], (name, key)
    assert not EvaluationChunk.objects.exists()
    assert EvaluationRun.objects.get(pk=run.pk).status == "done"
