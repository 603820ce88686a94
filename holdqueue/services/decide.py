"""Mold and (maybe) delay one job arriving at a live site: the one arrival decision
(``jobmolding.core.arrival.decide_arrival``, which the molding replay also calls) over the
site's bundle answering on the site's live snapshot (seed "End-to-End Predictions-Based
Resource Management Framework for Supercomputer Jobs", Sections IV-A and IV-B).

Only the candidates' source is the site's own: the caller's list, else the user's past sizes
at the site, else (a newcomer) the size grid around the original.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings

from jobmolding.core.arrival import ArrivalPredictor, ArrivalRules, decide_arrival
from jobmolding.core.candidates import (
    live_candidate_sizes,
    snapshot_sizes,
    speedup_candidates,
)
from predictor.core.state.request import JobRequest
from predictor.core.state.snapshot import Snapshot


@dataclass(frozen=True)
class JobDecision:
    """What to do with an arriving job: its size, when to submit it (site seconds), why."""

    procs: int
    release_s: float
    delayed: bool
    record: dict[str, Any]
    time_limit_s: float


def candidates_for(
    request: JobRequest, snapshot: Snapshot, mold: bool, given: list[int] | None
) -> np.ndarray:
    """The caller's candidates (plus the original), else the sizes of the user's jobs the
    snapshot knows (finished, waiting, running: ``candidates.snapshot_sizes``, the replay's
    rule too), else (a user new to the site) the size grid around the original."""
    if not mold:
        return np.array([request.procs], dtype=np.int64)
    if given:
        sizes = np.unique(np.array([*given, request.procs], dtype=np.int64))
        return sizes[(sizes >= 1) & (sizes <= snapshot.machine_procs)]
    used = snapshot_sizes(snapshot, request.user)
    return live_candidate_sizes(request.procs, used, snapshot.machine_procs)


def decide(
    site,
    snapshot: Snapshot,
    request: JobRequest,
    predictor: ArrivalPredictor,
    *,
    mold_job: bool,
    allow_delay: bool,
    candidates: list[int] | None = None,
) -> JobDecision:
    """The one arrival decision (``jobmolding.core.arrival.decide_arrival``) on the site's
    snapshot, answered by ``predictor`` (the site's ``LiveBundle``, loaded by the caller)."""
    sizes = candidates_for(request, snapshot, mold_job, candidates)
    conf = advice_config(site)
    cands = speedup_candidates(
        request.procs, sizes, request.req_time_s, conf["limit_s"], conf["sigma"], conf["a"]
    )
    rules = ArrivalRules(
        mold=mold_job, delay=allow_delay, guard=conf["guard"], work_limit=conf["work_limit"]
    )
    d = decide_arrival(snapshot, request, cands, predictor, rules)
    release = d.release_s(snapshot.time_s)
    limit = float(cands.req_time_s[int(np.flatnonzero(cands.procs == d.procs)[0])])
    record = {**d.record(), "speedup": {k: v for k, v in conf.items() if k != "limit_s"}}
    return JobDecision(d.procs, release, d.delayed, record, limit)


def advice_config(site) -> dict[str, Any]:
    """The site's advice settings (``config``): ``guard`` (chosen on its tuning part with
    ``evaluate_molding --guard auto`` on its history; 0: none), ``work_limit`` (the most CPU
    work a molded size may do against the original; 1: never more), Downey's ``speedup_sigma``
    (1) and ``speedup_a`` (average parallelism; None: the job's own size), and the
    longest time limit a molded job may ask for (the service's limit)."""
    config = getattr(site, "config", None) or {}
    return {
        "model": "downey",
        "guard": float(config.get("guard", 0.0)),
        "work_limit": float(config.get("work_limit", 1.0)),
        "sigma": float(config.get("speedup_sigma", 1.0)),
        "a": config.get("speedup_a"),
        "limit_s": float(getattr(settings, "QUEUECAST_MAX_TIME_LIMIT_S", 30 * 86400)),
    }
