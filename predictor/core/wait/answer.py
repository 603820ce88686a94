"""Every wait method's answers on the same targets: each method fitted once, no answer twice.

- **Methods made of others run last** (``auto``: ``adopt``, ``lend``). They take the experts
  already fitted here and the row answers those gave (:func:`offer_fitted`,
  :func:`lend_answers`): the same class and parameters fitted on the same context are the
  same expert, since fitting is deterministic, so ``auto`` beside its experts fits none of
  them again and asks none of their rows again.
- **With a runner that sends chunks** (:meth:`predictor.core.chunks.ChunkRunner.start`: the
  Celery fan-out), each method's chunks are sent as soon as it is fitted, and gathered once
  every method is fitted. The workers answer while this process fits the next method, and a
  method's last chunks overlap the next one's first, so no worker waits on a fit or on
  another worker's last chunk. Without one, each method is fitted and answered in turn.

A row's answer depends on that row only (:mod:`predictor.core.chunks`), so neither the order
nor the overlap changes an answer. Timings per method: ``fit_s``; ``predict_s``, the wall
time from when this process turned to the method's answers until they were merged (with a
runner, its chunks may have been answered, in part, while earlier methods were gathered).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping

import numpy as np

from predictor.core import chunks
from predictor.core.wait.types import WaitContext, WaitMethod, WaitPrediction

Progress = Callable[[float], None] | None
Timing = dict[str, float]


def offer_fitted(method: WaitMethod, fitted: Mapping[str, WaitMethod]) -> None:
    """Offer a method made of others (``auto``'s ``adopt``) the methods fitted here; it uses
    those that are the very experts its fit would build (``AutoWait.adopt``)."""
    adopt = getattr(method, "adopt", None)
    if adopt is not None:
        for name, other in fitted.items():
            adopt(name, other)


def lend_answers(
    method: WaitMethod, done: Mapping[str, tuple[WaitMethod, WaitPrediction]], rows: np.ndarray
) -> bool:
    """Give a method made of others (``auto``: ``lend``, ``same_expert``) the row answers of
    those already run here that are its experts: the same class and parameters fitted on the
    same context, so the same answers (``AutoWait.lend``). True when every expert's answers
    were lent: its rows are then answered in this process (a worker would ask the experts
    afresh)."""
    lend = getattr(method, "lend", None)
    if lend is None:
        return False
    for name, (other, pred) in done.items():
        if method.same_expert(name, other):  # type: ignore[attr-defined]
            lend(name, rows, pred.wait_s)
    return set(method.lent()) == set(method.methods_)  # type: ignore[attr-defined]


def run_order(methods: Mapping[str, WaitMethod]) -> list[str]:
    """The order methods are fitted and answered in: those made of others (``lend``) last."""
    return sorted(methods, key=lambda n: hasattr(methods[n], "lend"))


def _fit(method: WaitMethod, ctx: WaitContext, fitted: Mapping[str, WaitMethod]) -> float:
    offer_fitted(method, fitted)
    started = time.perf_counter()
    method.fit(ctx)
    return time.perf_counter() - started


def _timing(fit_s: float, predict_s: float, n: int) -> Timing:
    return {"fit_s": fit_s, "predict_s": predict_s, "predictions_per_s": n / max(predict_s, 1e-9)}


def answer_all(
    methods: Mapping[str, WaitMethod],
    ctx: WaitContext,
    targets: np.ndarray,
    progress: Callable[[str], Progress],
    n_jobs: int = 1,
    runner: chunks.ChunkRunner | None = None,
) -> Iterator[tuple[str, WaitPrediction, Timing]]:
    """Fit every method on ``ctx`` and answer ``targets`` (module docstring), yielding each
    method's answers in the order run (:func:`run_order`) as soon as they are merged: the
    caller summarises one while workers answer the next. ``progress(name)`` is that
    method's progress bar."""
    order = run_order(methods)
    sender = runner if runner is not None and hasattr(runner, "start") and targets.size else None
    fit_s: dict[str, float] = {}
    sent: dict[str, chunks.Sent] = {}
    done: dict[str, tuple[WaitMethod, WaitPrediction]] = {}

    def answer(name: str) -> tuple[str, WaitPrediction, Timing]:
        started = time.perf_counter()
        if name in sent:
            pred = chunks.merge(sent.pop(name).gather(progress(name)))
        else:
            pred = _answer(methods[name], name, targets, progress(name), n_jobs, runner, done)
        done[name] = (methods[name], pred)
        return name, pred, _timing(fit_s[name], time.perf_counter() - started, targets.size)

    try:
        for name in order:
            fit_s[name] = _fit(methods[name], ctx, {n: methods[n] for n in fit_s})
            if sender is None:
                yield answer(name)
            elif not hasattr(methods[name], "lend"):
                sent[name] = chunks.start_rows(methods[name], targets, runner=sender, name=name)
        for name in order if sender is not None else ():
            yield answer(name)
    finally:
        for pending in sent.values():  # a run failing (or its caller) before they were gathered
            pending.cancel()


def _answer(
    method: WaitMethod,
    name: str,
    targets: np.ndarray,
    progress: Progress,
    n_jobs: int,
    runner: chunks.ChunkRunner | None,
    done: Mapping[str, tuple[WaitMethod, WaitPrediction]],
) -> WaitPrediction:
    """A fitted method's answers; those lent whole are answered in this process."""
    if lend_answers(method, done, targets):
        n_jobs, runner = 1, None  # nothing left to spread: lent answers stay in this process
    return chunks.predict_rows(
        method, targets, jobs=n_jobs, progress=progress, runner=runner, name=name
    )
