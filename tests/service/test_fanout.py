"""Evaluation chunks as tasks (``predictor.services.fanout``): answers equal one process, chunks
answered by another worker are gathered, a dead worker's chunk is answered again, a failed
chunk fails the run naming it. (Real Celery workers: tests/reliability/test_fanout_workers.py.)"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from predictor.models import EvaluationChunk, EvaluationRun
from predictor.services import evaluations, fanout, runtime
from queuecast.longrun import Status
from tests.service.test_evaluate_wait_cmd import write_trace
from traces.core.swf import read_swf

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _forget_fits():
    fanout.forget()
    yield
    fanout.forget()


def wait_run(tmp_path: Path, methods: list[str], limit: int = 240) -> EvaluationRun:
    swf = write_trace(tmp_path / "t.swf", n=600, seed=3)
    return evaluations.new_run(
        kind="wait", swf_path=str(swf), methods=methods, params={"limit": limit, "seed": 0}
    )


def plain(run: EvaluationRun) -> dict:
    return evaluations.evaluate_swf(read_swf(run.swf_path), run.methods, run.params).results


def same(a: dict, b: dict) -> None:
    for name in a:
        for key in ("aae_s", "jobs", "correct_share", "scaled_aae"):
            assert a[name][key] == b[name][key], (name, key)
        assert a[name]["interval"] == b[name]["interval"], name


def runner_with(run_id: int, rows: int, after_create) -> fanout.CeleryChunks:
    """A runner that answers every chunk itself, calling ``after_create(ids)`` once the chunk
    rows exist (to act as another worker, or to break one)."""
    runner = fanout.CeleryChunks(run_id, rows_per_chunk=rows, send=False)
    create = runner._create

    def create_then(name, parts):
        ids = create(name, parts)
        after_create(ids)
        return ids

    runner._create = create_then
    return runner


def test_runner_is_used_only_with_a_broker(tmp_path, settings) -> None:
    run = wait_run(tmp_path, ["zero"])
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert fanout.runner_for(run) is None
    settings.CELERY_TASK_ALWAYS_EAGER = False
    runner = fanout.runner_for(run)
    assert runner is not None and runner.run_id == run.pk
    assert runner.chunk_count(10 * runner.rows_per_chunk + 1) == 11
    assert runner.chunk_count(10**9) == runner.max_chunks


def test_chunks_answered_by_the_orchestrator_equal_one_process(tmp_path) -> None:
    run = wait_run(tmp_path, ["apq", "qbets", "gbm", "zero"])
    runner = fanout.CeleryChunks(run.pk, rows_per_chunk=50, send=False)
    got = evaluations.evaluate_swf(
        read_swf(run.swf_path), run.methods, run.params, runner=runner
    ).results
    same(plain(run), got)
    # 240 targets, 50 a chunk, for apq, qbets and zero; gbm answers them all with one model
    # (one retrain block), so one chunk: a model is never trained in two processes
    assert runner.chunks == 3 * 5 + 1
    assert sum(runner.workers.values()) == 16
    assert not EvaluationChunk.objects.exists()  # gathered chunks are deleted


def test_chunks_answered_by_another_worker_are_gathered_in_order(tmp_path) -> None:
    """Half the chunks are answered through the task body (a worker that fits its own copy
    from the run's row) before the orchestrator gathers: the result is still identical."""
    run = wait_run(tmp_path, ["apq"])
    swf = read_swf(run.swf_path)
    truth = plain(run)

    def answer_some(ids):
        for pk in ids[::2]:
            assert fanout.run_chunk(pk) == "done"

    runner = runner_with(run.pk, 40, answer_some)
    got = evaluations.evaluate_swf(swf, run.methods, run.params, runner=runner).results
    same(truth, got)
    assert (run.pk, "apq") in fanout._FITTED


def test_a_worker_builds_a_run_context_once_for_all_its_methods(tmp_path) -> None:
    """A worker process reads the trace and sweeps its state once per run, not once per
    method; another run gets its own."""
    run = wait_run(tmp_path, ["zero", "median"])
    zero, targets = fanout.fitted(run.pk, "zero")
    median, same_targets = fanout.fitted(run.pk, "median")
    assert median.history_ is zero.history_
    np.testing.assert_array_equal(targets, same_targets)
    other = evaluations.new_run(
        kind="wait", swf_path=run.swf_path, methods=["zero"], params={"limit": 100, "seed": 0}
    )
    again, other_targets = fanout.fitted(other.pk, "zero")
    assert again.history_ is not zero.history_ and other_targets.size == 100


def test_runtime_chunks_equal_one_process(tmp_path) -> None:
    swf_path = write_trace(tmp_path / "t.swf", n=600, seed=4)
    run = evaluations.new_run(
        kind="runtime", swf_path=str(swf_path), methods=["rangeset", "smith"],
        params={"limit": 200},
    )  # fmt: skip
    swf = read_swf(str(swf_path))
    truth = runtime.evaluate_swf(swf, run.methods, run.params)["methods"]

    def answer_first(ids):
        assert fanout.run_chunk(ids[0]) == "done"

    runner = runner_with(run.pk, 45, answer_first)
    got = runtime.evaluate_swf(swf, run.methods, run.params, runner=runner)["methods"]
    for name in truth:
        for key in ("success_rate", "coverage", "jobs"):
            assert truth[name][key] == got[name][key], (name, key)


def fail_chunk(pk: int, error: str) -> None:
    EvaluationChunk.objects.filter(pk=pk).update(status=Status.FAILED, error=error)


def test_a_chunk_whose_worker_was_lost_is_answered_again(tmp_path) -> None:
    run = wait_run(tmp_path, ["zero"], limit=100)
    lost = "worker host:1:2 lost: its process is gone"
    runner = runner_with(run.pk, 50, lambda ids: fail_chunk(ids[1], lost))
    got = evaluations.evaluate_swf(
        read_swf(run.swf_path), run.methods, run.params, runner=runner
    ).results
    assert got["zero"]["jobs"] == 100


def test_a_failed_chunk_fails_the_run_naming_the_chunk(tmp_path) -> None:
    run = wait_run(tmp_path, ["zero"], limit=100)
    runner = runner_with(run.pk, 50, lambda ids: fail_chunk(ids[1], "MemoryError: out of memory"))
    with pytest.raises(fanout.ChunkFailed, match=r"chunk 1 of zero \(targets 50-99\).*Memory"):
        evaluations.evaluate_swf(read_swf(run.swf_path), run.methods, run.params, runner=runner)
    assert not EvaluationChunk.objects.exists()


def test_every_method_is_sent_before_any_is_gathered(tmp_path) -> None:
    """The orchestrator sends a method's chunks as soon as it is fitted and fits the next
    while workers answer: every method's chunks exist before the first is gathered (each
    fit after the first happens between them), and the figures equal one process's."""
    run = wait_run(tmp_path, ["apq", "qbets", "zero"])
    events: list[str] = []
    runner = fanout.CeleryChunks(run.pk, rows_per_chunk=60, send=False)
    start, gather = runner.start, fanout.SentChunks.gather

    def start_logged(name, method, parts):
        events.append(f"sent {name}")
        return start(name, method, parts)

    def gather_logged(sent, progress):
        events.append(f"gather {EvaluationChunk.objects.get(pk=sent.ids[0]).method}")
        return gather(sent, progress)

    runner.start = start_logged
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fanout.SentChunks, "gather", gather_logged)
        got = evaluations.evaluate_swf(
            read_swf(run.swf_path), run.methods, run.params, runner=runner
        ).results
    assert events == [
        "sent apq", "sent qbets", "sent zero", "gather apq", "gather qbets", "gather zero"
    ]  # fmt: skip
    same(plain(run), got)
    assert not EvaluationChunk.objects.exists()


def test_a_failed_chunk_leaves_no_chunk_of_any_method(tmp_path) -> None:
    """Chunks sent for methods not yet gathered are dropped when an earlier one fails."""
    run = wait_run(tmp_path, ["zero", "median"], limit=100)
    first = []

    def fail_first_method(ids):
        if not first:
            first.append(ids)
            fail_chunk(ids[0], "MemoryError: out of memory")

    runner = runner_with(run.pk, 50, fail_first_method)
    with pytest.raises(fanout.ChunkFailed, match=r"chunk 0 of zero"):
        evaluations.evaluate_swf(read_swf(run.swf_path), run.methods, run.params, runner=runner)
    assert runner.chunks == 4  # both methods were sent
    assert not EvaluationChunk.objects.exists()


def test_a_worker_whose_targets_differ_fails_the_chunk_saying_so(tmp_path) -> None:
    run = wait_run(tmp_path, ["zero"], limit=100)
    chunk = EvaluationChunk.objects.create(
        run=run, method="zero", index=0, lo=0, hi=10, first_row=1, last_row=2
    )
    assert fanout.run_chunk(chunk.pk) == "failed"
    chunk.refresh_from_db()
    assert "targets differ from the run's" in chunk.error
    assert fanout.run_chunk(chunk.pk) == "skipped"  # not pending any more


def test_the_stored_answer_is_the_methods_prediction(tmp_path) -> None:
    run = wait_run(tmp_path, ["median"], limit=60)
    method, targets = fanout.fitted(run.pk, "median")
    chunk = EvaluationChunk.objects.create(
        run=run, method="median", index=0, lo=10, hi=30,
        first_row=int(targets[10]), last_row=int(targets[29]),
    )  # fmt: skip
    assert fanout.run_chunk(chunk.pk) == "done"
    chunk.refresh_from_db()
    stored = pickle.loads(bytes(chunk.answer))
    np.testing.assert_array_equal(stored.wait_s, method.predict_rows(targets[10:30]).wait_s)
    assert chunk.worker and chunk.seconds >= 0
