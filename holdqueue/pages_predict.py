"""The predict page's live-site branch: ``POST /api/sites/{id}/predict/``'s service, shown
in the same cards as a trace answer (dates now, "in 2 h 10 min", the calibrated interval).

The predict page belongs to the predictor, a lower app: this module is registered as its
``queuecast.page_parts.PREDICT_SITE`` part in ``HoldqueueConfig.ready``."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import QuerySet

from holdqueue.models import Site
from holdqueue.serializers import PredictSerializer
from holdqueue.services.predict import predict_for_query
from predictor.pages import rangeset
from predictor.pages.predict import within_card
from queuecast.errors import QueuecastError


def sites() -> QuerySet[Site]:
    """The sites the predict form offers."""
    return Site.objects.all()


def site_answer(site: Site, user: Any, data: dict[str, Any]) -> tuple[dict | None, dict]:
    """(the raw answer, field errors): validated by the API's serializer, then its service."""
    query = PredictSerializer(data={
        "procs": data["procs"], "time_limit_s": int(round(data["time_limit"])),
        "user": str(data["user_id"]) if data.get("user_id", -1) >= 0 else "",
        "confidence": data["confidence"], "within_s": data.get("within"),
    })  # fmt: skip
    if not query.is_valid():
        return None, dict(query.errors)
    try:
        return predict_for_query(site, user, query.validated_data), {}
    except QueuecastError as exc:
        return None, {"non_field_errors": [exc.detail]}


def present_site(site: Site, raw: dict[str, Any], confidence: float) -> dict[str, Any]:
    """The site answer in the predict page's shape (see ``predictor.pages.predict.present``); the
    finish is the start plus the median runtime, as for a trace."""
    wait = raw["wait"]
    within = wait.get("within") or {}  # asked with within_s: the chance to start by then
    ranges, limit_s = raw["runtime"]["ranges"], float(raw["time_limit_s"])
    run_s = rangeset.median_runtime_s(ranges)
    run_s = float(raw["runtime"]["point_s"]) if run_s is None else run_s
    return {
        "site": site,
        "at_date": raw["at"],
        "wait_s": raw["predicted_start_s"],
        "start_date": raw["predicted_start"],
        "runtime_s": run_s,
        "finish_s": raw["predicted_start_s"] + run_s,
        "finish_date": raw["predicted_start"] + dt.timedelta(seconds=run_s),
        "ranges": rangeset.ranges_table(ranges, run_s),
        "outside": rangeset.outside_share(ranges),
        "inside": 1.0 - rangeset.outside_share(ranges),
        "chart": rangeset.rangeset_chart(ranges, run_s, limit_s),
        "interval": {"lower_s": wait["low_s"], "upper_s": wait["high_s"],
                     "level": wait.get("confidence", confidence), "kind": "calibrated",
                     "about": (wait.get("interval") or {}).get("about")},
        "wait": {"method": raw["method"]["wait"], "predictor": raw["method"].get("wait_predictor"),
                 "support": None},
        "runtime": {**raw["runtime"], "method": raw["method"].get("runtime")},
        "time_limit_s": raw["time_limit_s"],
        "site_accuracy": raw.get("accuracy") or {},
        "why": raw.get("why"),
        **within_card(within.get("within_s"), within.get("p"), within.get("jobs"),
                      within.get("about")),
        "online": {"methods": raw["method"], "accuracy": raw.get("accuracy") or {}},
    }  # fmt: skip
