"""The last finished jobs of a fitted history, each answered as a live site would have answered
it at its arrival: what the headline rule is chosen on (``headline.choose_rule``) and what a
site's accuracy and wait interval are measured on (``holdqueue.services.predict.calibrate``).

Where the site kept the answer it told a job at its arrival (:mod:`jobmolding.core.told`),
that answer is scored (:func:`pooled_answers`); only the other jobs are answered again here.

Job ``i`` is answered on the history's state at its own submission with rows ``0..i-1``
arrived (``from_log(..., rows=i)``: nothing later is visible, jobs of the same second on later
rows included), as ``LiveBundle`` answers a new request: both wait figures (history estimate
and queue-based start) and the runtime point. The running jobs' ends read the limit
fractions of the jobs ended before then (``LimitFractions``), not the whole fitted
history's. The same function serves the live site's fit and the replay's
(``replay_bundle.ReplayBundle``), so both keep the rule a site with that history would keep.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from jobmolding.core.headline import RuleChoice, choose_rule
from jobmolding.core.live_bundle import request_starts, runtime_ranges
from jobmolding.core.told import ToldRows
from predictor.core.runtime.remaining import LimitFractions
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import from_log

if TYPE_CHECKING:
    from predictor.core.bundle import FittedBundle


@dataclass(frozen=True)
class Answered:
    """Per scored job (arrays of one length, seconds): the two wait figures, the actual wait,
    the predicted runtime point and the actual runtime. ``queue_s`` is ``nan`` where the
    answer had no queue-based start."""

    history_s: np.ndarray
    queue_s: np.ndarray
    actual_s: np.ndarray
    runtime_s: np.ndarray
    actual_runtime_s: np.ndarray

    told: int = 0  # how many rows hold the answer the site told (the others: answered again)

    def __len__(self) -> int:
        return int(self.actual_s.size)


def answer_rows(
    bundle: FittedBundle, rows: np.ndarray, progress: Callable[[int], None] | None = None
) -> Answered:
    """Rows ``rows`` of ``bundle.jobs`` (known waits), each answered at its own arrival.

    The history estimates come from one batched call, ``bundle.wait.predict_rows(rows)``:
    each row at its own arrival, the contract's equal of ``predict`` on the row's snapshot
    (``tests/core/test_contract.py``; equal up to float rounding, 1e-9). Asked one job at a
    time, ``auto`` built its weights at every job's instant: the batch takes a fifth off a
    replay's CPU on SDSC-SP2's first 8,000 jobs (docs/results.md, stop 54). Per job remain
    its runtime point and its queue-based start (``live_bundle.request_starts``), as
    ``LiveBundle.answers`` computes them: most of what scoring costs on a long queue.
    """
    if bundle.wait is None:
        raise ValueError("the history has no known waits (SWF field 3 is -1 for every job)")
    jobs = bundle.jobs
    rows = np.asarray(rows, dtype=np.int64)
    batch = RequestBatch.from_jobs(jobs)
    submit = jobs["submit_time"].to_numpy(float)
    ended = _ends(jobs)
    user = jobs["user_id"].to_numpy(np.int64)  # what LimitFractions reads
    run, limit = jobs["run_time"].to_numpy(float), jobs["requested_time"].to_numpy(float)
    history = bundle.wait.predict_rows(rows).wait_s if rows.size else np.zeros(0)
    out = np.full((len(rows), 2), np.nan)
    for k, i in enumerate(rows):
        t = float(submit[i])
        snap = from_log(jobs, t, machine_procs=bundle.machine_procs, rows=int(i),
                        columns=bundle.log_columns)  # fmt: skip
        done = ended < t
        then = LimitFractions.from_arrays(user[done], run[done], limit[done])
        request = batch.take(slice(int(i), int(i) + 1))
        point = runtime_ranges(bundle, snap, request)[0].point_s
        start = request_starts(bundle, snap, request, np.array([point]), then)[0]
        out[k] = (max(float(start) - t, 0.0), point)
        if progress is not None:
            progress(k + 1)
    return Answered(history, out[:, 0], jobs["wait_time"].to_numpy(float)[rows], out[:, 1],
                    run[rows])  # fmt: skip


def _ends(jobs: pd.DataFrame) -> np.ndarray:
    """When each job had ended (``inf``: never known to have)."""
    wait = jobs["wait_time"].to_numpy(float)
    run = jobs["run_time"].to_numpy(float)
    end = jobs["submit_time"].to_numpy(float) + np.maximum(wait, 0.0) + np.maximum(run, 0.0)
    return np.where((wait >= 0) & (run >= 0), end, np.inf)


def last_ended(end_s: np.ndarray, n_jobs: int, by_s: float = np.inf) -> np.ndarray:
    """Positions of the ``n_jobs`` jobs that ended last at or before ``by_s``, ascending.

    The jobs whose outcomes were learnt last, not the last to arrive: a job that waited long
    ends late, and the last arrivals among the finished jobs are the ones that did not wait
    long. Pooling by arrival left long waits out of the interval's pool (docs/results.md,
    "Which wait a site tells"); the trace path pools by when a wait became known too
    (``predictor.core.wait.intervals.known_order``). Ties in end: the earlier row first.
    """
    done = np.flatnonzero(np.isfinite(end_s) & (end_s <= by_s))
    if n_jobs <= 0:
        return done[:0]
    return np.sort(done[np.argsort(end_s[done], kind="stable")][-n_jobs:])


def last_rows(bundle: FittedBundle, n_jobs: int) -> np.ndarray:
    """The rows of the ``n_jobs`` jobs of the fitted history that ended last
    (:func:`last_ended`; not row 0: it has no past)."""
    return last_rows_in(bundle.jobs, n_jobs)


def last_rows_in(jobs: pd.DataFrame, n_jobs: int) -> np.ndarray:
    """:func:`last_rows` of a history frame before it is fitted (the same rows)."""
    ended = _ends(jobs)
    ended[:1] = np.inf  # row 0 is never scored
    return last_ended(ended, n_jobs)


def pooled_answers(bundle: FittedBundle, rows: np.ndarray, told: ToldRows) -> Answered:
    """Rows ``rows`` of ``bundle.jobs``: the answer the site told where ``told.kept``, the
    others answered again at their arrival (:func:`answer_rows`); the actual waits and
    runtimes from the history either way."""
    rows = np.asarray(rows, dtype=np.int64)
    if told.kept.shape != rows.shape:
        raise ValueError(f"told answers for {told.kept.size} jobs, {rows.size} rows asked")
    fields = [
        np.array(getattr(told, f), dtype=float) for f in ("history_s", "queue_s", "runtime_s")
    ]
    if not told.kept.all():  # every job told: nothing to answer again
        again = answer_rows(bundle, rows[~told.kept])
        for col, got in zip(fields, (again.history_s, again.queue_s, again.runtime_s), strict=True):
            col[~told.kept] = got
    jobs = bundle.jobs
    actual = jobs["wait_time"].to_numpy(float)[rows]
    run = jobs["run_time"].to_numpy(float)[rows]
    return Answered(fields[0], fields[1], actual, fields[2], run, int(told.kept.sum()))


def choose_on_history(
    bundle: FittedBundle, n_jobs: int, told: Callable[[np.ndarray], ToldRows] | None = None
) -> tuple[RuleChoice, Answered]:
    """The headline rule chosen on the ``n_jobs`` jobs of the history that ended last
    (:func:`last_rows`), and their answers. ``told(rows)``: the answers the site told those
    rows' jobs, where it kept them (None: every job answered again)."""
    rows = last_rows(bundle, n_jobs)
    kept = told(rows) if told is not None else ToldRows.none(rows.size)
    answered = pooled_answers(bundle, rows, kept)
    choice = choose_rule(answered.history_s, answered.queue_s, answered.actual_s, answered.told)
    return choice, answered
