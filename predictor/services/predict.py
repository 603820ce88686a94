"""Predictions on stored traces: one fitted bundle per trace, one cache, one batched call.

The bundle (``predictor.core.bundle``: the state sweep, the wait, bound and runtime methods)
is fitted once per trace and kept in a small LRU keyed by the trace's id and version (job
count and ingest end), so a re-ingested trace is fitted again. The LRU sits on the
cross-process store (``predictor.services.fitted_store``): one process fits, every process loads.
The wait and runtime APIs, the predict page and the molding replay all go through
:func:`predict_requests`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings

from predictor.core.answer_accuracy import (
    kept_runtime_accuracy_at,
    runtime_row_scores,
    wait_accuracy,
)
from predictor.core.bundle import FittedBundle, RequestAnswer, fit_bundle, predict_waits
from predictor.core.bundle import predict_requests as predict_core
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.runtime.row_scores import RuntimeRowScores
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import Snapshot
from predictor.core.wait.recent import RecentErrors, RecentScorer
from predictor.services import shared_rows
from predictor.services.fitted_cache import FittedCache, store_key
from predictor.services.fitted_store import default_store
from predictor.services.method_reason import wait_reason
from predictor.services.why import why_body
from queuecast.errors import ConflictError, InvalidInput
from queuecast.longrun import Status
from traces.models import Trace
from traces.services import swf_trace_for

CACHE_SIZE = 4


WAIT_METHOD = "auto"  # every answer's default: the online-weighted methods with safe fallbacks
RUNTIME_METHOD = "choose"  # chosen per trace on its tuning part (success at a coverage ceiling)


def service_methods() -> tuple[str, str]:
    """The wait and runtime methods traces and sites answer with: ``auto`` and the runtime
    method chosen on the tuning part, unless the settings ``QUEUECAST_SERVICE_WAIT_METHOD``
    / ``QUEUECAST_SERVICE_RUNTIME_METHOD`` name others (the test suite's fast default)."""
    return (
        str(getattr(settings, "QUEUECAST_SERVICE_WAIT_METHOD", WAIT_METHOD)),
        str(getattr(settings, "QUEUECAST_SERVICE_RUNTIME_METHOD", RUNTIME_METHOD)),
    )


def fit_trace(
    trace: Trace, wait_method: str | None = None, runtime_method: str | None = None
) -> FittedBundle:
    """The bundle of a stored trace (its first 20 % of jobs choose the settings and the
    runtime method), fitted once per trace version, with every model an instant after the
    tuning part needs trained ahead (``FittedBundle.train_ahead``: no request trains one)."""
    default_wait, default_runtime = service_methods()
    swf = swf_trace_for(trace)
    return fit_bundle(
        swf.jobs,
        int(trace.machine_procs or swf.machine_procs or 1),
        wait_method=wait_method or default_wait,
        runtime_method=runtime_method or default_runtime,
    ).train_ahead()


def _child_args(wait: str | None = None, runtime: str | None = None) -> Any:
    """The ``manage.py fit_model`` arguments of a trace's fit in a child process."""
    extra = [*(["--wait", wait] if wait else []), *(["--runtime", runtime] if runtime else [])]
    return lambda trace: ["fit_model", str(trace.pk), *extra]


BUNDLES: FittedCache[FittedBundle] = FittedCache(
    CACHE_SIZE, fit_trace, store=default_store, child_args=_child_args()
)
# A ``method`` override in a query: one small cache per (wait, runtime) pair asked for.
OVERRIDES: dict[tuple[str, str], FittedCache[FittedBundle]] = {}
OVERRIDE_CACHE_SIZE = 2


def cache_for(wait: str | None = None, runtime: str | None = None) -> FittedCache[FittedBundle]:
    """The cache of a trace's bundle answering with ``wait`` / ``runtime`` (None: the
    service's default methods)."""
    default = service_methods()
    key = (wait or default[0], runtime or default[1])
    if key == default:
        return BUNDLES
    return OVERRIDES.setdefault(key, FittedCache(
        OVERRIDE_CACHE_SIZE, lambda t: fit_trace(t, wait_method=key[0], runtime_method=key[1]),
        store=default_store, kind=f"trace-{key[0]}-{key[1]}", child_args=_child_args(*key),
    ))  # fmt: skip


def bundle_for(
    trace: Trace, wait: str | None = None, runtime: str | None = None, block: bool = False
) -> FittedBundle:
    """The trace's fitted bundle; ``wait`` / ``runtime`` name a method to answer with instead
    of the trace's default choice. A request never fits: until the bundle is stored it is
    fitted in the background (a child process) and this raises ``ModelNotReady`` (503,
    ``predictor.services.background_fit``); ``block`` (commands) fits here instead."""
    if trace.status != Status.DONE:
        raise ConflictError(f"trace {trace.name!r} is {trace.status}; only done traces predict")
    cache = cache_for(wait, runtime)
    return cache.get(trace) if block else cache.ready(trace)


def predict_requests(
    bundle: FittedBundle,
    snapshot: Snapshot,
    requests: JobRequest | list[JobRequest] | RequestBatch,
) -> list[RequestAnswer]:
    """Wait (point and bound), runtime rangeSet, response rangeSet and what answered, per
    request arriving in ``snapshot`` (see ``predictor.core.bundle.predict_requests``).

    A bundle without wait methods (a log with no known wait) is a ``ConflictError`` (409).
    """
    _has_waits(bundle)
    return predict_core(bundle, snapshot, requests)


def _has_waits(bundle: FittedBundle) -> None:
    """A ``ConflictError`` (409) for a bundle without wait methods (no known wait)."""
    if not bundle.has_waits:
        raise ConflictError(
            "the trace has no known waits (SWF field 3 is -1 for every job), so there is no "
            "history to predict waits from; evaluate it with `evaluate_wait --simulate-waits`"
        )


def resolve_queue(queues: Any, queue_id: int) -> int:
    """The queue a query means: -1 (not given) is the trace's only queue. ``queues``: the
    log's queue column, or its distinct queues as a sorted list (:func:`known_queues`).

    History and state are per queue (spec), so a query in a queue the trace does not
    have would see no history at all; it is rejected naming the field.
    """
    known = queues if isinstance(queues, list) else sorted(int(q) for q in set(queues.tolist()))
    if queue_id == -1 and len(known) == 1:
        return known[0]
    if queue_id not in known:
        shown = ", ".join(map(str, known[:20])) + (" ..." if len(known) > 20 else "")
        raise InvalidInput(f"queue_id {queue_id} is not a queue of this trace ({shown})",
                           field="queue_id")  # fmt: skip
    return queue_id


def known_queues(bundle: FittedBundle) -> list[int]:
    """The fitted log's distinct queues, sorted; found once per bundle (it lives and dies
    with it, so a new trace version has its own): reading the whole queue column cost
    about 0.6 CPU-ms per request."""
    found = bundle.__dict__.get("_known_queues")
    if found is None:
        found = sorted(int(q) for q in set(bundle.jobs["queue_id"].tolist()))
        bundle.__dict__["_known_queues"] = found
    return found


def request_of(bundle: FittedBundle, query: dict[str, Any]) -> JobRequest:
    """The request of an API query (``JobQuerySerializer`` fields), submitted at ``at``."""
    return JobRequest(
        user=int(query["user_id"]),
        group=int(query.get("group_id", -1)),
        queue=resolve_queue(known_queues(bundle), int(query.get("queue_id", -1))),
        procs=int(query["requested_procs"]),
        req_time_s=float(query.get("requested_time", 0.0)),
        submit_s=float(query["at"]),
    )


def predict_wait(trace: Trace, query: dict[str, Any]) -> dict[str, Any]:
    """APQ's wait for a job submitted at ``query["at"]`` (the trace's state then, its
    history known then), with the QBETS bound."""
    bundle = bundle_for(trace, wait=query.get("method"))
    request = request_of(bundle, query)
    _has_waits(bundle)
    snapshot = bundle.snapshot(request.submit_s)
    answer = predict_waits(bundle, snapshot, [request])[0]  # the body shows no runtime
    stored = None if query.get("method") else trace  # stored row answers are the default's
    return {
        "wait_s": answer.wait_s,
        "method": answer.wait_method,
        "predictor": answer.wait_predictor,
        "support": answer.wait_support,
        "qbets_upper_s": answer.wait_upper_s,
        "at": request.submit_s,
        **(confidence := trust(bundle, request.submit_s, answer.wait_s, query, stored)),
        "runtime_method": bundle.runtime.name,
        "methods": methods_body(bundle),
        "accuracy": accuracy_body(
            bundle, request.submit_s, confidence, (trace, cache_for(query.get("method")).kind)
        ),  # fmt: skip
        "why": why_body(bundle.runtime, snapshot, request, headline_wait_s=answer.wait_s),
    }


def methods_body(bundle: FittedBundle) -> dict[str, Any]:
    """Both methods that answer and how each was chosen."""
    choice = bundle.runtime_choice
    return {
        "wait": bundle.wait.name if bundle.wait is not None else None,
        "wait_reason": wait_reason(bundle.wait),
        "runtime": bundle.runtime.name,
        "runtime_reason": choice.reason if choice is not None else "asked for",
        "runtime_tuning_success": _num(choice.tuning_success) if choice is not None else None,
        "runtime_tuning_coverage": _num(choice.tuning_coverage) if choice is not None else None,
    }


def accuracy_body(
    bundle: FittedBundle,
    at: float,
    recent: dict[str, Any] | None = None,
    shared: tuple[Trace, str] | None = None,
) -> dict[str, Any]:
    """Both methods' accuracy on the most recent jobs at ``at`` (``predictor.core.accuracy``):
    the wait method's AAE beside always-zero's, the runtime method's success and coverage
    beside the requested time's. NaN (nothing known yet) is null. ``shared`` (the trace and
    its bundle's cache kind): the runtime accuracy at an instant is computed once for every
    process, through the store."""
    body: dict[str, Any] = {}
    if recent is not None:
        wait = wait_accuracy(recent["recent_jobs"], _nan(recent["recent_aae_s"]),
                             _nan(recent["recent_mean_wait_s"]))  # fmt: skip
        body["wait"] = _clean(wait.as_dict())
    ctx = bundle.runtime_ctx
    key = ctx.ended_by(at)  # the recent set moves as jobs end
    cache = bundle.__dict__.setdefault("_runtime_accuracy", {})  # lives with the bundle
    scores = runtime_scores(bundle)

    def compute() -> Any:
        return kept_runtime_accuracy_at(scores, at, RUNTIME_RECENT)

    if shared is None:
        if key not in cache:
            shared_rows.keep(cache, {key: compute()})
        value = cache[key]
    else:  # once for every process (``predictor.services.shared_rows``)
        trace, kind = shared
        ident, version = store_key(trace)

        def compute_shared() -> Any:  # the rows' terms too: a new instant scores new rows only
            return shared_rows.through_store(
                default_store(), ident, version, scores, compute, f"runtime_rows-{kind}"
            )

        value = shared_rows.shared_value(
            default_store(), f"runtime_accuracy-{kind}", ident, version, key, compute_shared,
            cache,
        )  # fmt: skip
    body["runtime"] = _clean(value.as_dict())
    return body


RUNTIME_RECENT = 100  # jobs: a density answer costs tens of ms, this stays under seconds


def _nan(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (_num(v) if isinstance(v, float) else v) for k, v in values.items()}


def trust(
    bundle: FittedBundle,
    at: float,
    wait_s: float,
    query: dict[str, Any],
    trace: Trace | None = None,
) -> dict[str, Any]:
    """Interval at the query's confidence, P(start within T) and the wait method's recent
    accuracy (``predictor.core.wait.recent``): its answers on the jobs that most recently
    started by ``at``, built once per trace version and instant (``RecentScorer``: each log
    row is predicted once, instants kept in a small LRU)."""
    level, within = float(query.get("confidence") or 0.9), query.get("within_s")
    recent = recent_at(bundle, at, trace)
    body: dict[str, Any] = {"confidence": level, "within_s": within, "p_within": None,
                            "p_within_jobs": 0, "interval_low_s": None, "interval_high_s": None,
                            "interval_jobs": 0, "interval_level_used": None}  # fmt: skip
    body.update(recent_jobs=int(recent.rows.size), recent_aae_s=_num(recent.aae_s),
                recent_mean_wait_s=_num(recent.mean_wait_s))  # fmt: skip
    if recent.rows.size:
        scorer = recent_scorer(bundle, trace)
        adaptive = scorer.adaptive(at, level)
        like = scorer.window(at) if within is not None else None
        ans = recent.answer(np.array([wait_s]), level, within, adaptive, like)
        if adaptive is not None:
            body.update(interval_jobs=adaptive.known, interval_level_used=adaptive.target)
        body.update(interval_low_s=float(ans["low_s"][0]), interval_high_s=float(ans["high_s"][0]))
        if within is not None:
            body.update(p_within=float(ans["p_within"][0]), p_within_jobs=ans["p_within_jobs"])
    return body


def runtime_scores(bundle: FittedBundle) -> RuntimeRowScores:
    """The bundle's runtime-accuracy terms per row (``predictor.core.runtime.row_scores``),
    kept across instants; they live and die with the bundle."""
    scores = bundle.__dict__.get("_runtime_row_scores")
    if scores is None:
        made = runtime_row_scores(bundle.runtime, bundle.runtime_ctx)
        scores = bundle.__dict__.setdefault("_runtime_row_scores", made)
    return scores


def recent_scorer(bundle: FittedBundle, trace: Trace | None = None) -> RecentScorer:
    """The bundle's recent-error scorer (row predictions memoised, instants cached); it lives
    and dies with the bundle. With the trace, it starts from the row predictions stored for
    this trace version (by :func:`warm_rows` or by any process's requests), if any."""
    scorer = bundle.__dict__.get("_recent_scorer")
    if scorer is None:
        scorer = RecentScorer(bundle.wait, bundle.jobs)
        if trace is not None:
            shared_rows.read_into(default_store(), *store_key(trace), scorer.memo)
        scorer = bundle.__dict__.setdefault("_recent_scorer", scorer)
    return scorer


def recent_at(bundle: FittedBundle, at: float, trace: Trace | None = None) -> RecentErrors:
    """The recent errors at ``at``, its pool computed once for every process: a new instant
    first reads the rows other processes stored, and the rows it predicts are merged into
    the store (``predictor.services.shared_rows``)."""
    scorer = recent_scorer(bundle, trace)
    if trace is None or not scorer.missing(at):
        return scorer.at(at)
    ident, version = store_key(trace)
    return shared_rows.through_store(
        default_store(), ident, version, scorer.memo, lambda: scorer.at(at)
    )


def _num(value: float) -> float | None:
    return None if value != value else float(value)  # NaN -> null


def predict_runtime(trace: Trace, query: dict[str, Any]) -> dict[str, Any]:
    """The runtime rangeSet of a job submitted at ``query["at"]`` (only what was known then);
    ``level`` says which history answered (the fallback when the tuple has none)."""
    bundle = bundle_for(trace, runtime=query.get("method"))
    request = request_of(bundle, query)
    rs = bundle.runtime.predict(bundle.snapshot(request.submit_s), [request]).ranges[0]
    return {
        **rangeset_body(rs),
        "method": bundle.runtime.name,
        "at": request.submit_s,
        "methods": methods_body(bundle),
        "accuracy": accuracy_body(
            bundle, request.submit_s, shared=(trace, cache_for(runtime=query.get("method")).kind)
        ),  # fmt: skip
    }


def rangeset_body(rs: RangeSet) -> dict[str, Any]:
    ranges = [
        {"low_s": float(lo), "high_s": float(hi), "probability": float(p)}
        for lo, hi, p in zip(rs.low_s, rs.high_s, rs.probability, strict=True)
    ]
    return {"ranges": ranges, "point_s": rs.point_s, "level": rs.level, "support": rs.support}
