"""Predictions on stored traces: one fitted bundle per trace, one cache, one batched call.

The bundle (``predictor.core.bundle``: the state sweep, the wait, bound and runtime methods)
is fitted once per trace and kept in a small LRU keyed by the trace's id and version (job
count and ingest end), so a re-ingested trace is fitted again. The wait and runtime APIs, the
predict page and the molding replay all go through :func:`predict_requests`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.core.bundle import FittedBundle, RequestAnswer, fit_bundle
from predictor.core.bundle import predict_requests as predict_core
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import Snapshot
from predictor.core.wait.recent import RecentErrors, recent_errors, recent_rows
from predictor.fitted_cache import FittedCache
from predictor.services_why import why_body
from queuecast.errors import ConflictError, InvalidInput
from queuecast.longrun import Status
from traces.models import Trace
from traces.services import swf_trace_for

CACHE_SIZE = 4


def fit_trace(trace: Trace) -> FittedBundle:
    """The bundle of a stored trace (its first 20 % of jobs choose the settings)."""
    swf = swf_trace_for(trace)
    return fit_bundle(swf.jobs, int(trace.machine_procs or swf.machine_procs or 1))


BUNDLES: FittedCache[FittedBundle] = FittedCache(CACHE_SIZE, fit_trace)


def bundle_for(trace: Trace) -> FittedBundle:
    """The trace's fitted bundle (fitted on first use, then cached)."""
    if trace.status != Status.DONE:
        raise ConflictError(f"trace {trace.name!r} is {trace.status}; only done traces predict")
    return BUNDLES.get(trace)


def predict_requests(
    bundle: FittedBundle,
    snapshot: Snapshot,
    requests: JobRequest | list[JobRequest] | RequestBatch,
) -> list[RequestAnswer]:
    """Wait (point and bound), runtime rangeSet, response rangeSet and what answered, per
    request arriving in ``snapshot`` (see ``predictor.core.bundle.predict_requests``).

    A bundle without wait methods (a log with no known wait) is a ``ConflictError`` (409).
    """
    if not bundle.has_waits:
        raise ConflictError(
            "the trace has no known waits (SWF field 3 is -1 for every job), so there is no "
            "history to predict waits from; evaluate it with `evaluate_wait --simulate-waits`"
        )
    return predict_core(bundle, snapshot, requests)


def resolve_queue(queues: Any, queue_id: int) -> int:
    """The queue a query means: -1 (not given) is the trace's only queue.

    History and state are per queue (spec), so a query in a queue the trace does not
    have would see no history at all; it is rejected naming the field.
    """
    known = sorted(int(q) for q in set(queues.tolist()))
    if queue_id == -1 and len(known) == 1:
        return known[0]
    if queue_id not in known:
        shown = ", ".join(map(str, known[:20])) + (" ..." if len(known) > 20 else "")
        raise InvalidInput(f"queue_id {queue_id} is not a queue of this trace ({shown})",
                           field="queue_id")  # fmt: skip
    return queue_id


def request_of(bundle: FittedBundle, query: dict[str, Any]) -> JobRequest:
    """The request of an API query (``JobQuerySerializer`` fields), submitted at ``at``."""
    return JobRequest(
        user=int(query["user_id"]),
        group=int(query.get("group_id", -1)),
        queue=resolve_queue(bundle.jobs["queue_id"], int(query.get("queue_id", -1))),
        procs=int(query["requested_procs"]),
        req_time_s=float(query.get("requested_time", 0.0)),
        submit_s=float(query["at"]),
    )


def predict_wait(trace: Trace, query: dict[str, Any]) -> dict[str, Any]:
    """APQ's wait for a job submitted at ``query["at"]`` (the trace's state then, its
    history known then), with the QBETS bound."""
    bundle = bundle_for(trace)
    request = request_of(bundle, query)
    snapshot = bundle.snapshot(request.submit_s)
    answer = predict_requests(bundle, snapshot, [request])[0]
    return {
        "wait_s": answer.wait_s,
        "method": answer.wait_method,
        "predictor": answer.wait_predictor,
        "support": answer.wait_support,
        "qbets_upper_s": answer.wait_upper_s,
        "at": request.submit_s,
        **trust(bundle, request.submit_s, answer.wait_s, query),
        "why": why_body(bundle.runtime, snapshot, request),
    }


def trust(bundle: FittedBundle, at: float, wait_s: float, query: dict[str, Any]) -> dict[str, Any]:
    """Interval at the query's confidence, P(start within T) and the wait method's recent
    accuracy (``predictor.core.wait.recent``): its errors on the jobs that most recently
    started by ``at``, re-scored once per trace and instant (small LRU)."""
    level, within = float(query.get("confidence") or 0.9), query.get("within_s")
    recent = _recent(bundle, at)
    body: dict[str, Any] = {"confidence": level, "within_s": within, "p_within": None,
                            "interval_low_s": None, "interval_high_s": None}  # fmt: skip
    body.update(recent_jobs=int(recent.rows.size), recent_aae_s=_num(recent.aae_s),
                recent_mean_wait_s=_num(recent.mean_wait_s))  # fmt: skip
    if recent.rows.size:
        ans = recent.answer(np.array([wait_s]), level, within)
        body.update(interval_low_s=float(ans["low_s"][0]), interval_high_s=float(ans["high_s"][0]))
        if within is not None:
            body["p_within"] = float(ans["p_within"][0])
    return body


def _recent(bundle: FittedBundle, at: float) -> RecentErrors:
    cache = bundle.__dict__.setdefault("_recent_errors", {})  # lives and dies with the bundle
    if at not in cache:
        if len(cache) >= 64:
            cache.pop(next(iter(cache)))
        jobs = bundle.jobs
        n_before = int(np.searchsorted(jobs["submit_time"].to_numpy(float), at, side="right"))
        rows = recent_rows(jobs, at, n_before)
        cache[at] = recent_errors(bundle.wait, rows, jobs["wait_time"].to_numpy(float))
    return cache[at]


def _num(value: float) -> float | None:
    return None if value != value else float(value)  # NaN -> null


def predict_runtime(trace: Trace, query: dict[str, Any]) -> dict[str, Any]:
    """The runtime rangeSet of a job submitted at ``query["at"]`` (only what was known then);
    ``level`` says which history answered (the fallback when the tuple has none)."""
    bundle = bundle_for(trace)
    request = request_of(bundle, query)
    rs = bundle.runtime.predict(bundle.snapshot(request.submit_s), [request]).ranges[0]
    return {**rangeset_body(rs), "method": bundle.runtime.name, "at": request.submit_s}


def rangeset_body(rs: RangeSet) -> dict[str, Any]:
    ranges = [
        {"low_s": float(lo), "high_s": float(hi), "probability": float(p)}
        for lo, hi, p in zip(rs.low_s, rs.high_s, rs.probability, strict=True)
    ]
    return {"ranges": ranges, "point_s": rs.point_s, "level": rs.level, "support": rs.support}
