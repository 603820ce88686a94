"""The predictor a live site decides with: the site's fitted bundle (``predictor.core.bundle``)
answering on the site's live snapshot, each new request's wait the headline of its history
estimate and its queue-based start by the site's rule (``headline``, docs/sites.md).

Queue-based starts: EASY run forward on the site's current queue with the bundle's
predicted runtimes (``future.forward_starts``), like ``squeue --start`` or Moab's
``showstart`` but with predicted rather than requested runtimes. Each running job ends at
its predicted end given how long it has already run (``future.predicted_ends``: its runtime
rangeSet conditioned on ``R > elapsed``, capped by its time limit); each queued job runs its
predicted runtime and the scheduler plans with its time limit. A
new request is queued after every waiting job.

Plain data in, plain data out: the site's service loads the bundle, the snapshot and the
history once and hands this object to ``arrival.decide_arrival`` (the replay hands it a
``replay_bundle.ReplayBundle``), so the decision never calls back into the service.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from jobmolding.core.future import (
    forward_start_each,
    forward_start_last,
    forward_starts,
    predicted_ends,
)
from jobmolding.core.headline import DEFAULT, headline_wait
from jobmolding.core.told import Told
from predictor.core.bundle import RequestAnswer, predict_requests
from predictor.core.response import response_rangeset
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.runtime.remaining import LimitFractions
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import Snapshot

if TYPE_CHECKING:
    from predictor.core.bundle import FittedBundle


@dataclass(frozen=True)
class QueueAnswer(RequestAnswer):
    """A live answer: ``wait_s`` is the headline; the two figures it comes from beside it."""

    history_wait_s: float = 0.0
    queue_wait_s: float | None = None


def runtime_ranges(bundle: FittedBundle, snapshot: Snapshot, batch: RequestBatch) -> list[RangeSet]:
    """The bundle's runtime rangeSets for ``batch`` (as ``predict_requests`` gives them)."""
    if len(batch) == 0:
        return []
    snap = replace(snapshot, history=bundle.jobs)
    return list(bundle.runtime.predict(snap, batch).ranges)


def _points(bundle: FittedBundle, snapshot: Snapshot, batch: RequestBatch) -> np.ndarray:
    return np.array([r.point_s for r in runtime_ranges(bundle, snapshot, batch)], float)


def running_ends(
    bundle: FittedBundle, snapshot: Snapshot, fractions: LimitFractions | None = None
) -> np.ndarray:
    """Each running job's predicted end given how long it has run (``future.predicted_ends``,
    with the fitted history's limit fractions, or ``fractions``: those of the jobs finished
    by a past instant, so an answer for that instant reads nothing later)."""
    known = bundle.limit_fractions if fractions is None else fractions
    return predicted_ends(snapshot, known, lambda batch: runtime_ranges(bundle, snapshot, batch))


def queue_starts(
    bundle: FittedBundle,
    snapshot: Snapshot,
    requests: RequestBatch | None = None,
    requests_run_s: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(start of each waiting job, start of each request), site seconds. Each request is
    queued alone after every waiting job (candidates never wait behind each other) and
    starts no earlier than its own arrival."""
    run, wait = snapshot.running, snapshot.waiting
    ends = running_ends(bundle, snapshot)
    waiting_run = _points(bundle, snapshot, wait.requests)
    start, _ = forward_starts(snapshot, ends, waiting_run)
    n_run, n_wait = len(run), len(wait)
    mine = _request_starts(snapshot, ends, waiting_run, requests, requests_run_s)
    return start[n_run : n_run + n_wait], mine


def request_starts(
    bundle: FittedBundle,
    snapshot: Snapshot,
    requests: RequestBatch,
    requests_run_s: np.ndarray,
    fractions: LimitFractions | None = None,
) -> np.ndarray:
    """The requests' part of :func:`queue_starts` alone (the waiting jobs' own starts are
    not run forward when nobody reads them)."""
    ends = running_ends(bundle, snapshot, fractions)
    waiting_run = _points(bundle, snapshot, snapshot.waiting.requests)
    return _request_starts(snapshot, ends, waiting_run, requests, requests_run_s)


def _request_starts(
    snapshot: Snapshot,
    ends: np.ndarray,
    waiting_run: np.ndarray,
    requests: RequestBatch | None,
    requests_run_s: np.ndarray | None,
) -> np.ndarray:
    """Each request queued alone after the waiting jobs, run forward until it starts (two or
    more: their starts read off one run of the queue, ``future.forward_start_each``)."""
    if requests is None or requests_run_s is None or len(requests) == 0:
        return np.zeros(0)
    run_s = np.asarray(requests_run_s, dtype=float)
    if len(requests) == 1:  # one run, stopped as soon as it starts
        starts = np.array([forward_start_last(snapshot, ends, waiting_run, requests, run_s[:1])])
    else:
        starts = forward_start_each(snapshot, ends, waiting_run, requests, run_s)
    return np.maximum(starts, np.asarray(requests.submit_s, dtype=float))


def with_queue(
    bundle: FittedBundle,
    snapshot: Snapshot,
    answers: list[RequestAnswer],
    rule: str = DEFAULT,
    fractions: LimitFractions | None = None,
) -> list[RequestAnswer]:
    """Each new request's answer with its queue-based start and the headline wait (``rule``
    of :mod:`jobmolding.core.headline` over the history estimate and the queue-based start).
    Jobs already queued or running (submitted before the snapshot) keep the history answer:
    only their runtimes are asked for. ``fractions``: as :func:`running_ends`."""
    new = [k for k, a in enumerate(answers) if a.request.submit_s >= snapshot.time_s - 1.0]
    if not new:
        return answers
    batch = RequestBatch.of([answers[k].request for k in new])
    points = np.array([answers[k].runtime.point_s for k in new])
    starts = request_starts(bundle, snapshot, batch, points, fractions)
    out = list(answers)
    for k, start in zip(new, starts, strict=True):
        a = answers[k]
        queue_wait = max(float(start) - a.request.submit_s, 0.0)
        wait = float(headline_wait(rule, np.array(a.wait_s), np.array(queue_wait)))
        out[k] = QueueAnswer(
            **{**vars(a), "wait_s": wait, "response": response_rangeset(a.runtime, wait)},
            history_wait_s=a.wait_s,
            queue_wait_s=queue_wait,
        )
    return out


@dataclass(frozen=True)
class LiveBundle:
    """A site's fitted bundle as the arrival decision asks for it (``ArrivalPredictor``), with
    the headline rule chosen for it (``headline_scores.choose_on_history``). ``fractions``:
    the limit fractions of a past instant's finished jobs, to answer as of that instant (the
    fitted history's when None: a live site answers about now). ``told``: the figures of
    every new request it answered, by (snapshot instant, size), for the caller to keep the
    one it submits (:mod:`jobmolding.core.told`; :meth:`told_for`)."""

    bundle: FittedBundle
    rule: str = DEFAULT
    fractions: LimitFractions | None = None
    told: dict[tuple[float, int], Told] = field(default_factory=dict, compare=False)

    def answers(
        self,
        snapshot: Snapshot,
        requests: RequestBatch,
        runtimes: list[RangeSet] | None = None,
    ) -> list[RequestAnswer]:
        """``predict_requests`` on the snapshot (the fitted history), with queue starts;
        ``runtimes`` as there (the requests' rangeSets, when the caller has them)."""
        snap = replace(snapshot, history=self.bundle.jobs)
        answers = predict_requests(self.bundle, snap, requests, runtimes)
        out = with_queue(self.bundle, snapshot, answers, self.rule, self.fractions)
        at = float(snapshot.time_s)
        for a in out:
            if isinstance(a, QueueAnswer):
                q = float("nan") if a.queue_wait_s is None else float(a.queue_wait_s)
                told = Told(float(a.history_wait_s), q, float(a.runtime.point_s))
                self.told[(at, int(a.request.procs))] = told
        return out

    def told_for(self, at_s: float, procs: int) -> Told | None:
        """The figures told a new request of ``procs`` processors answered on the snapshot of
        instant ``at_s`` (None: none was)."""
        return self.told.get((float(at_s), int(procs)))

    def predict(
        self,
        snapshot: Snapshot,
        requests: RequestBatch,
        runtimes: list[RangeSet] | None = None,
    ) -> tuple[np.ndarray, list[RangeSet]]:
        answers = self.answers(snapshot, requests, runtimes)
        return np.array([a.wait_s for a in answers], float), [a.runtime for a in answers]

    def runtimes(self, snapshot: Snapshot, requests: RequestBatch) -> list[RangeSet]:
        """The runtime rangeSets alone: no wait prediction and no forward EASY run."""
        return runtime_ranges(self.bundle, snapshot, requests)

    def running_ends(self, snapshot: Snapshot) -> np.ndarray:
        """The running jobs' predicted ends (:func:`running_ends`)."""
        return running_ends(self.bundle, snapshot, self.fractions)
