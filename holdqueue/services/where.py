"""Where to submit: one request answered at every site the user may use (and traces on
request), sorted by predicted finish (``POST /api/predict/``).

A site answers as ``POST /api/sites/{id}/predict/`` does (its live queue now); a trace answers
for a job submitted at its last submission (its most history), in the trace's queue of that
last job. Times are seconds from submission, so sites and traces sort together; a site also
gives dates. A place that cannot answer (no history yet, the batch system down, too few
processors, a trace without waits) is listed under ``skipped`` with its reason, never
silently dropped.
"""

from __future__ import annotations

from typing import Any

from holdqueue.models import Site
from holdqueue.services.predict import predict_for_query
from predictor.services import predict
from predictor.services.background_fit import ModelNotReady
from queuecast.errors import InvalidInput, QueuecastError
from queuecast.longrun import Status
from traces.models import Trace


def sites_for(user: Any) -> list[Site]:
    """The sites a user may submit to: every site (the sites API lists them all)."""
    return list(Site.objects.order_by("name"))


def traces_for(user: Any, wanted: bool | list[int]) -> list[Trace]:
    """The done traces asked for: every one (``True``), none (``False``) or those ids; an
    unknown or unfinished id is an error naming the field."""
    done = Trace.objects.filter(status=Status.DONE).order_by("name")
    if wanted is True:
        return list(done)
    if not wanted:
        return []
    found = {t.pk: t for t in done.filter(pk__in=wanted)}
    missing = [i for i in wanted if i not in found]
    if missing:
        raise InvalidInput(f"no finished trace with id {missing[0]}", field="traces")
    return [found[i] for i in wanted]


def site_answer(site: Site, user: Any, data: dict[str, Any]) -> dict[str, Any]:
    if data["procs"] > site.machine_procs:
        raise InvalidInput(f"site {site.name} has {site.machine_procs} processors", field="procs")
    raw = predict_for_query(site, user, data)
    return {
        "kind": "site", "id": site.pk, "name": site.name,
        "predicted_start_s": raw["predicted_start_s"], "predicted_end_s": raw["predicted_end_s"],
        "predicted_start": raw["predicted_start"], "predicted_end": raw["predicted_end"],
        "queue_read_at": raw["queue_read_at"],
        "interval": {"low_s": raw["wait"]["low_s"], "high_s": raw["wait"]["high_s"],
                     "confidence": raw["wait"]["confidence"]},
        "method": {"wait": raw["method"]["wait"], "runtime": raw["method"]["runtime"]},
        "accuracy": {"wait": raw["accuracy"]["wait"], "runtime": raw["accuracy"]["runtime"],
                     "told": raw["accuracy"].get("told")},
        "why": raw["why"],
    }  # fmt: skip


def trace_answer(trace: Trace, data: dict[str, Any]) -> dict[str, Any]:
    procs = int(trace.machine_procs or 0)
    if procs and data["procs"] > procs:
        raise InvalidInput(f"trace {trace.name} has {procs} processors", field="procs")
    bundle = predict.bundle_for(trace)
    query = {
        "user_id": -1, "requested_procs": data["procs"],
        "requested_time": float(data["time_limit_s"]), "at": float(trace.last_submit_s or 0.0),
        "queue_id": int(bundle.jobs["queue_id"].iloc[-1]), "confidence": data["confidence"],
        **({"method": data["method"]} if data.get("method") else {}),
    }  # fmt: skip
    wait = predict.predict_wait(trace, query)
    runtime = predict.predict_runtime(trace, query)
    end = wait["wait_s"] + runtime["point_s"]
    return {
        "kind": "trace", "id": trace.pk, "name": trace.name,
        "predicted_start_s": wait["wait_s"], "predicted_end_s": end,
        "predicted_start": None, "predicted_end": None, "queue_read_at": None,
        "interval": {"low_s": wait["interval_low_s"], "high_s": wait["interval_high_s"],
                     "confidence": wait["confidence"]},
        "method": {"wait": wait["method"], "runtime": runtime["method"]},
        "accuracy": wait["accuracy"],
        "why": wait["why"],
    }  # fmt: skip


def where_to_submit(user: Any, data: dict[str, Any]) -> dict[str, Any]:
    """Answers sorted by predicted finish (then name); the places that could not answer."""
    answers, skipped = [], []
    places: list[tuple[str, Any]] = [("site", s) for s in sites_for(user)]
    places += [("trace", t) for t in traces_for(user, data.get("traces") or False)]
    for kind, place in places:
        try:
            answers.append(site_answer(place, user, data) if kind == "site"
                           else trace_answer(place, data))  # fmt: skip
        except QueuecastError as exc:
            skipped.append({"kind": kind, "id": place.pk, "name": place.name,
                            "reason": exc.detail,
                            "being_fitted": isinstance(exc, ModelNotReady)})  # fmt: skip
    answers.sort(key=lambda a: (a["predicted_end_s"], a["name"]))
    return {
        "procs": data["procs"],
        "time_limit_s": data["time_limit_s"],
        "answers": answers,
        "skipped": skipped,
    }
