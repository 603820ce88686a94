"""Mold and (maybe) delay one job arriving at a live site, with the molding engineer's pure
decisions (``jobmolding.core.choice.choose_size``, ``holdqueue.core.delay``) over the
predictor's answers for the site's live snapshot (seed "End-to-End Predictions-Based
Resource Management Framework for Supercomputer Jobs", Sections IV-A and IV-B).

Candidates are predicted as tentative arrivals on the same snapshot; for the delay, the
running jobs' ends are predicted (start + the point of their runtime rangeSet, capped by
their time limit), the future time ``t`` is found, the snapshot is advanced to ``t`` by EASY
with the predicted runtimes (``holdqueue.core.future``: the queued jobs take the processors
the ended ones free) and every candidate is predicted again arriving at ``t``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from holdqueue.core.delay import decide_delay, future_time
from holdqueue.core.future import advance
from holdqueue.services import predict as site_predict
from jobmolding.core.candidates import live_candidate_sizes
from jobmolding.core.choice import MoldingDecision, choose_size
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import Snapshot


@dataclass(frozen=True)
class JobDecision:
    """What to do with an arriving job: its size, when to submit it (site seconds), why."""

    procs: int
    release_s: float
    delayed: bool
    record: dict[str, Any]


def candidates_for(
    request: JobRequest, snapshot: Snapshot, mold: bool, given: list[int] | None
) -> np.ndarray:
    """The caller's candidates (plus the original), else the user's past sizes (seed), else
    (a user new to the site) the size grid around the original."""
    if not mold:
        return np.array([request.procs], dtype=np.int64)
    if given:
        sizes = np.unique(np.array([*given, request.procs], dtype=np.int64))
        return sizes[(sizes >= 1) & (sizes <= snapshot.machine_procs)]
    hist = snapshot.history
    used = hist.loc[hist["user_id"] == request.user, "requested_procs"].to_numpy(np.int64)
    return live_candidate_sizes(request.procs, np.unique(used), snapshot.machine_procs)


def mold(site, snapshot: Snapshot, request: JobRequest, sizes: np.ndarray) -> MoldingDecision:
    batch = RequestBatch.of([request.with_procs(int(s)) for s in sizes])
    pred = site_predict.predict_requests_for_site(site, snapshot, batch)
    return choose_size(request.procs, sizes, pred.wait_s, pred.runtimes)


def runtime_points(site, snapshot: Snapshot) -> tuple[np.ndarray, np.ndarray]:
    """Point runtimes (rangeSet points) of the running and of the waiting jobs, one call."""
    running, waiting = snapshot.running, snapshot.waiting
    if len(running) + len(waiting) == 0:
        return np.zeros(0), np.zeros(0)
    batch = running.requests.concat(waiting.requests)
    pred = site_predict.predict_requests_for_site(site, snapshot, batch)
    point = np.array([r.point_s for r in pred.runtimes], dtype=float)
    return point[: len(running)], point[len(running) :]


def predicted_ends(snapshot: Snapshot, point: np.ndarray) -> np.ndarray:
    """Predicted end (site seconds) of each running job: start + min(point, time limit)."""
    running = snapshot.running
    limit = running.requests.req_time_s
    run = np.where(limit > 0, np.minimum(point, limit), point)
    ends = running.start_s + run
    # A job already past its prediction is expected at its limit (or in a second).
    overdue_end = np.where(limit > 0, running.start_s + limit, snapshot.time_s + 1.0)
    return np.where(ends > snapshot.time_s, ends, np.maximum(overdue_end, snapshot.time_s + 1.0))


def decide(
    site,
    snapshot: Snapshot,
    request: JobRequest,
    *,
    mold_job: bool,
    allow_delay: bool,
    candidates: list[int] | None = None,
) -> JobDecision:
    sizes = candidates_for(request, snapshot, mold_job, candidates)
    now_choice = mold(site, snapshot, request, sizes)
    record: dict[str, Any] = {"molding": now_choice.as_dict(), "delay": None}
    if not allow_delay:
        return JobDecision(now_choice.chosen_procs, snapshot.time_s, False, record)
    running_run, waiting_run = runtime_points(site, snapshot)
    ends = predicted_ends(snapshot, running_run)
    t = future_time(snapshot.time_s, ends)
    later = now_choice
    if t is not None:  # the site at t: EASY forward with those runtimes (holdqueue.core.future)
        later = mold(site, advance(snapshot, t, ends, waiting_run), request.at(t), sizes)
    verdict = decide_delay(
        snapshot.time_s,
        t,
        now_choice.chosen_procs,
        now_choice.chosen_response_s,
        later.chosen_procs,
        later.chosen_response_s,
    )
    record["delay"] = verdict.as_dict()
    if verdict.delay:
        record["molding_at_release"] = later.as_dict()
    return JobDecision(verdict.procs, verdict.release_s, verdict.delay, record)
