"""Evaluation chunks as Celery tasks: more workers answer one evaluation run faster.

With a broker (``CELERY_BROKER_URL``) the run's own task, the *orchestrator*, fits each
method as before, cuts its test targets into contiguous chunks (``predictor.core.chunks``),
writes one :class:`~predictor.models.EvaluationChunk` row per chunk and sends one task per
chunk (``predictor.tasks_chunks.run_chunk``, by name). Any worker answers a chunk by claiming
its row through the long-run lifecycle (``queuecast.longrun``: claim, lease, heartbeat,
reaper). The orchestrator answers pending chunks too while it waits, so a single worker never
waits on itself, and it takes over a chunk whose worker died. It then merges the answers in
target order: the result equals the one-process result exactly (``tests/service/
test_fanout.py``; with real workers, ``tests/reliability/test_fanout_workers.py``).

Nothing large crosses the broker or the database on the way out: a task carries a chunk id.
A worker process rebuilds the run's inputs (``predictor.services.run_inputs``: the same trace and
split) and fits the method by its registry name (seeded and deterministic:
``tests/core/test_contract.py``), once per run and method, and keeps it for that run's other
chunks. It checks the log rows at the chunk's ends against the row before answering. The
answers come back pickled in the chunk rows (this service's own data), deleted when the
method is merged. This is a fan-out gathered through the database rather than a Celery chord:
the run's lifecycle (progress, time limit, failure) stays with one task, and no pickled
prediction travels through the result backend.
"""

from __future__ import annotations

import logging
import math
import pickle
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings

from predictor.core.chunks import Progress
from predictor.core.lru import LRU
from predictor.core.runtime import evaluate as runtime_eval
from predictor.core.runtime.history import build_context as runtime_context
from predictor.core.runtime.registry import make_method as runtime_method
from predictor.core.wait import evaluate as wait_eval
from predictor.core.wait.registry import make_method as wait_method
from predictor.models import EvaluationChunk, EvaluationRun
from predictor.services.run_inputs import load_swf, params_of
from queuecast.errors import QueuecastError
from queuecast.heartbeat import worker_id
from queuecast.longrun import Claim, Status, execute, task_named
from queuecast.models import RunLease

logger = logging.getLogger(__name__)
TASK = "predictor.tasks_chunks.run_chunk"
RETRIES = 2  # a chunk whose worker died is answered again at most this many times
FITTED_KEEP = 2  # fitted methods a worker process keeps (one run at a time, a method or two)


class ChunkFailed(QueuecastError):
    """A chunk failed for a reason other than a lost worker; the run fails with it."""


def runner_for(run: EvaluationRun) -> CeleryChunks | None:
    """The fan-out runner when a broker is set (tasks are not run in-process), else None."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    return CeleryChunks(run.pk, run.owner_id)


@dataclass
class CeleryChunks:
    """The :class:`~predictor.core.chunks.ChunkRunner` of a broker: one task per chunk."""

    run_id: int
    owner_id: int | None = None
    rows_per_chunk: int = field(default_factory=lambda: settings.QUEUECAST_EVAL_CHUNK_ROWS)
    max_chunks: int = 64
    poll_s: float = 0.25
    send: bool = True  # False: the orchestrator answers every chunk itself (tests)
    chunks: int = 0
    workers: dict[str, int] = field(default_factory=dict)

    def chunk_count(self, n_rows: int) -> int:
        return max(1, min(self.max_chunks, math.ceil(n_rows / self.rows_per_chunk)))

    def summary(self) -> dict[str, Any]:
        """Chunks sent and how many each worker process answered (the run stores it)."""
        return {"chunks": self.chunks, "workers": dict(self.workers)}

    def run(self, name: str, method: Any, parts: list[np.ndarray], progress: Progress) -> list:
        return self.start(name, method, parts).gather(progress)

    def start(self, name: str, method: Any, parts: list[np.ndarray]) -> SentChunks:
        """Create and send the chunks; :meth:`SentChunks.gather` waits for them."""
        ids = self._create(name, parts)
        self.chunks += len(ids)
        sent = SentChunks(self, ids, method, dict(zip(ids, parts, strict=True)))
        try:
            if self.send:
                _send(ids)
        except BaseException:
            sent.cancel()
            raise
        return sent

    def _create(self, name: str, parts: list[np.ndarray]) -> list[int]:
        # a run taken over from a dead worker left its chunks: they are this run's to redo
        EvaluationChunk.objects.filter(run_id=self.run_id, method=name).delete()
        bounds = np.cumsum([0, *[p.size for p in parts]])
        rows = [
            EvaluationChunk(
                run_id=self.run_id,
                owner_id=self.owner_id,
                method=name,
                index=k,
                lo=int(bounds[k]),
                hi=int(bounds[k + 1]),
                first_row=int(p[0]),
                last_row=int(p[-1]),
            )
            for k, p in enumerate(parts)
        ]
        return [c.pk for c in EvaluationChunk.objects.bulk_create(rows)]

    def _gather(
        self, ids: list[int], method: Any, rows: dict[int, np.ndarray], progress: Progress
    ) -> list:
        size = {pk: r.size for pk, r in rows.items()}
        total, retries = sum(size.values()), dict.fromkeys(ids, 0)
        next_takeover = 0.0
        while True:
            state = {
                pk: (status, error)
                for pk, status, error in EvaluationChunk.objects.filter(pk__in=ids).values_list(
                    "pk", "status", "error"
                )
            }
            if len(state) < len(ids):  # another delivery of the run took it over
                raise ChunkFailed(f"{len(ids) - len(state)} chunk rows of this run are gone")
            done = [pk for pk in ids if state[pk][0] == Status.DONE]
            if progress is not None:
                progress(sum(size[pk] for pk in done) / total)  # also checks the time limit
            if len(done) == len(ids):
                break
            for pk in ids:
                if state[pk][0] == Status.FAILED:
                    self._retry_or_raise(pk, state[pk][1], retries)
            pending = [pk for pk in ids if state[pk][0] == Status.PENDING]
            if time.monotonic() >= next_takeover:  # a running chunk whose worker died
                pending += [pk for pk in ids if state[pk][0] == Status.RUNNING]
                next_takeover = time.monotonic() + float(settings.QUEUECAST_RUN_HEARTBEAT_S)
            if not any(_answer_here(pk, method, rows[pk]) for pk in pending):
                time.sleep(self.poll_s)
        done_rows = EvaluationChunk.objects.filter(pk__in=ids).values_list("pk", "answer", "worker")
        answers = {}
        for pk, answer, worker in done_rows:
            answers[pk] = answer
            self.workers[worker] = self.workers.get(worker, 0) + 1
        return [pickle.loads(bytes(answers[pk])) for pk in ids]

    @staticmethod
    def _retry_or_raise(pk: int, error: str, retries: dict[int, int]) -> None:
        lost = error.startswith("worker ")  # the reaper's and the takeover's reasons
        if not lost or retries[pk] >= RETRIES:
            chunk = EvaluationChunk.objects.get(pk=pk)
            raise ChunkFailed(
                f"chunk {chunk.index} of {chunk.method} (targets {chunk.lo}-{chunk.hi - 1}) "
                f"failed: {error}"
            )
        retries[pk] += 1
        logger.warning("evaluation chunk %s: %s; answering it again", pk, error)
        EvaluationChunk.objects.filter(pk=pk, status=Status.FAILED).update(
            status=Status.PENDING, error="", progress=0.0
        )


@dataclass
class SentChunks:
    """One method's chunks, sent (:class:`~predictor.core.chunks.Sent`)."""

    runner: CeleryChunks
    ids: list[int]
    method: Any
    rows: dict[int, np.ndarray]

    def gather(self, progress: Progress) -> list:
        try:
            return self.runner._gather(self.ids, self.method, self.rows, progress)
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Delete the chunk rows and their leases (done: their answers were read)."""
        EvaluationChunk.objects.filter(pk__in=self.ids).delete()
        RunLease.objects.filter(run_label=_LABEL, run_id__in=self.ids).delete()


_LABEL = EvaluationChunk._meta.label_lower


def _send(ids: list[int]) -> None:
    """One task per chunk; if the broker refuses, the orchestrator answers them all."""
    from kombu.exceptions import OperationalError

    try:
        task = task_named(TASK)
        for pk in ids:
            task.delay(pk)
    except (OperationalError, ConnectionError, OSError) as exc:
        logger.warning("chunk tasks not sent (%s: %s); answering them here", type(exc), exc)


def _answer_here(pk: int, method: Any, rows: np.ndarray) -> bool:
    """Answer chunk ``pk`` in this process with the orchestrator's fitted ``method``; True if
    this process took it (False: another worker holds it, or it is done)."""
    return execute(EvaluationChunk, pk, lambda claim: _answer(claim, method, rows)) != "skipped"


def _answer(claim: Claim, method: Any, rows: np.ndarray) -> dict[str, Any]:
    """The fields a done chunk stores: its pickled answer, seconds and who answered."""
    started = time.perf_counter()
    prediction = method.predict_rows(rows, progress=claim.progress)
    return {
        "answer": pickle.dumps(prediction, protocol=pickle.HIGHEST_PROTOCOL),
        "seconds": time.perf_counter() - started,
        "worker": worker_id(),
    }


# --- the worker side ------------------------------------------------------------------------

_FITTED: LRU[tuple[Any, np.ndarray]] = LRU(size=FITTED_KEEP)


def run_chunk(chunk_id: int) -> str:
    """The chunk task's body: fit (or reuse) the method, claim the chunk, answer it.

    The fit comes before the claim, so a chunk is never held while a worker fits; a chunk
    already taken or answered meanwhile is left (``skipped``).
    """
    chunk = EvaluationChunk.objects.filter(pk=chunk_id, status=Status.PENDING).first()
    if chunk is None:
        return "skipped"
    try:
        method, targets = fitted(chunk.run_id, chunk.method)
    except Exception:  # e.g. the trace file is not on this host: the others answer it
        logger.exception("chunk %s: could not fit %s here; leaving it", chunk_id, chunk.method)
        return "skipped"
    rows = targets[chunk.lo : chunk.hi]
    if rows.size != chunk.hi - chunk.lo or (
        (int(rows[0]), int(rows[-1])) != (chunk.first_row, chunk.last_row)
    ):
        return execute(EvaluationChunk, chunk_id, lambda claim: _mismatch(chunk, rows))
    return execute(EvaluationChunk, chunk_id, lambda claim: _answer(claim, method, rows))


def _mismatch(chunk: EvaluationChunk, rows: np.ndarray) -> None:
    got = f"{rows[0]}..{rows[-1]}" if rows.size else "no rows"
    raise ChunkFailed(
        f"this worker's targets differ from the run's: rows {got}, expected "
        f"{chunk.first_row}..{chunk.last_row} (a different trace file or code version?)"
    )


def fitted(run_id: int, name: str) -> tuple[Any, np.ndarray]:
    """The run's method ``name`` fitted on the run's inputs, and the run's target rows
    (kept per process: ``FITTED_KEEP`` entries)."""
    key = (run_id, name)
    found = _FITTED.get(key)
    if found is not None:
        return found
    run = EvaluationRun.objects.select_related("trace").get(pk=run_id)
    value = _fit_wait(run, name) if run.kind == EvaluationRun.Kind.WAIT else _fit_runtime(run, name)
    return _FITTED.put(key, value)


def _fit_wait(run: EvaluationRun, name: str) -> tuple[Any, np.ndarray]:
    """As ``predictor.core.wait.evaluate.evaluate_trace`` builds them for the run."""
    ctx, targets = _wait_inputs(run)
    method = wait_method(name, run.params.get("seed", 0))
    method.fit(ctx)
    return method, targets


_INPUTS: dict[int, tuple[Any, np.ndarray]] = {}  # the last run's wait context, per process


def _wait_inputs(run: EvaluationRun) -> tuple[Any, np.ndarray]:
    """The run's wait context (the trace read and its state swept) and target rows, built
    once per process for its latest run: every method fitted here shares them, as the
    orchestrator's methods share its context (an HPC2N sweep costs seconds per method)."""
    if run.pk not in _INPUTS:
        _INPUTS.clear()
        swf, params = load_swf(run), run.params
        selection = wait_eval.select_targets(
            swf.jobs, params.get("tune_fraction", 0.2), params.get("limit")
        )
        procs = int(swf.machine_procs or 1)
        ctx, _ = wait_eval.build_context(swf.jobs, procs, selection.n_tune)
        _INPUTS[run.pk] = (ctx, selection.targets)
    return _INPUTS[run.pk]


def forget() -> None:
    """Drop this process's fitted methods and run inputs (tests)."""
    _FITTED.clear()
    _INPUTS.clear()


def _fit_runtime(run: EvaluationRun, name: str) -> tuple[Any, np.ndarray]:
    """As ``predictor.core.runtime.evaluate.evaluate_runtime`` builds them for the run."""
    swf = load_swf(run)
    ctx = runtime_context(swf.jobs, float(swf.machine_procs or 1), params_of(run.params))
    rows = runtime_eval.select_targets(ctx, run.params.get("limit"))
    return runtime_method(name).fit(ctx), rows
