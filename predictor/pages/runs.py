"""Browser pages for long runs: the runs overview (start an evaluation or a replay, see
yours with live progress) and an evaluation's results as tables and charts.

Runs are started by the page's script through the API (``POST .../evaluations/``,
``POST .../replays/``, 202 + the row), so the browser and the API share one code path;
a run's page polls the run's API address until it is done.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse

from predictor.core.wait.metrics import WAIT_CLASS_EDGES, WAIT_CLASS_LABELS
from predictor.core.wait.registry import DEFAULT_METHODS as WAIT_METHODS
from predictor.models import EvaluationRun
from predictor.services import runtime
from pyss_adapter.core.estimates import ESTIMATE_NAMES
from pyss_adapter.core.replay import SCHEDULERS
from pyss_adapter.models import Replay
from queuecast import charts, humanize, labels, page_parts
from queuecast.longrun import Status
from queuecast.page_parts import RUNS_LIST
from queuecast.permissions import visible_to
from traces.models import Trace

BUSY = (Status.PENDING, Status.RUNNING)
LIST_LIMIT = 50


@login_required
def runs(request: HttpRequest) -> HttpResponse:
    """Start runs and list yours, newest first."""
    evaluations = visible_to(EvaluationRun.objects.select_related("trace", "owner"), request.user)
    replays = visible_to(Replay.objects.select_related("trace", "owner"), request.user)
    traces = Trace.objects.filter(status=Status.DONE).order_by("name")
    context = {
        "nav": "runs",
        "evaluations": evaluations[:LIST_LIMIT],
        "replays": replays[:LIST_LIMIT],
        "traces": traces,
        "selected_trace": request.GET.get("trace"),
        "wait_methods": WAIT_METHODS,
        "runtime_methods": runtime.parse_methods(None),
        # blocks of higher apps (the molding runs): queuecast.page_parts.RUNS_LIST
        **{name: part(request.user) for name, part in page_parts.parts(RUNS_LIST).items()},
        "next_urls": {
            k: reverse(name, args=[0]).replace("/0/", "/{id}/")
            for k, name in (
                ("evaluation", "evaluation-page"),
                ("replay", "replay-page"),
                ("molding", "molding-page"),
            )
        },
        "schedulers": list(SCHEDULERS),
        "estimate_names": ESTIMATE_NAMES,
    }
    return render(request, "runs/list.html", context)


@login_required
def evaluation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(
        visible_to(EvaluationRun.objects.select_related("trace", "owner"), request.user), pk=pk
    )
    context: dict[str, Any] = {
        "nav": "runs",
        "run": run,
        "busy": run.status in BUSY,
        "params": humanised_params(run),
    }
    if run.status == Status.DONE:
        present = wait_tables if run.kind == EvaluationRun.Kind.WAIT else runtime_tables
        context.update(present(run.result or {}))
    return render(request, "runs/evaluation.html", context)


def wait_tables(result: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Rows in the CLI's columns, paired intervals vs APQ, and two charts."""
    rows = [{"method": name, **m} for name, m in result.items()]
    best = min((r["aae_s"] for r in rows if r.get("aae_s") is not None), default=None)
    for r in rows:
        r["best"] = r.get("aae_s") == best
        intervals = r.get("interval") or {}
        r["intervals"] = [{"level": float(k), **v} for k, v in sorted(intervals.items())]
        ratio = r.get("aae_over_mean_wait")
        r["no_better_than_zero"] = ratio is not None and ratio >= 1
    by_method = charts.bar(
        [r["method"] for r in rows],
        {
            "AAE": [r.get("aae_s") for r in rows],
            "mean wait (always-zero's AAE)": [r.get("mean_wait_s") for r in rows],
        },
        y_title="average absolute error",
        y_format="duration",
    )
    names = wait_class_names()
    by_class = charts.bar(
        list(names.values()),
        {
            r["method"]: [
                (r.get("aae_by_class") or {}).get(c, {}).get("aae_s") for c in WAIT_CLASS_LABELS
            ]
            for r in rows
        },
        x_title="actual wait class",
        y_title="AAE",
        y_format="duration",
    )
    class_jobs = {
        names[c]: next(((r.get("aae_by_class") or {}).get(c, {}).get("jobs") for r in rows), 0)
        for c in WAIT_CLASS_LABELS
    }
    return {
        "rows": rows,
        "chart_method": by_method,
        "chart_class": by_class,
        "class_jobs": class_jobs,
        "levels": sorted({i["level"] for r in rows for i in r["intervals"]}),
        "coverage": coverage_note(rows),
        "told_classes": told_classes(rows, names),
    }


def told_classes(rows: list[dict[str, Any]], names: dict[str, str]) -> dict[str, Any] | None:
    """Coverage at the highest level per class of the *predicted* wait, per method (None for
    a run made before stop 59, whose intervals were not split so)."""
    top = max((i for r in rows for i in r["intervals"]), key=lambda i: i["level"], default=None)
    if top is None or not top.get("by_prediction"):
        return None
    level = top["level"]
    table = []
    for r in rows:
        found = next((i for i in r["intervals"] if i["level"] == level), {})
        by = found.get("by_prediction") or {}
        table.append({"method": r["method"], "cells": [by.get(c, {}) for c in WAIT_CLASS_LABELS]})
    return {"level": level, "classes": list(names.values()), "rows": table}


def runtime_tables(result: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Success and coverage per method (the seed's two runtime measures) and a chart."""
    rows = [{"method": name, **m} for name, m in result.items()]
    chart = charts.bar(
        [r["method"] for r in rows],
        {
            "success rate": [r.get("success_rate") for r in rows],
            "coverage": [r.get("coverage") for r in rows],
        },
        y_title="share",
        y_format="percent",
    )
    return {"rows": rows, "chart_method": chart}


def humanised_params(run: EvaluationRun) -> list[dict[str, str]]:
    """The run's parameters as labelled values with units (``queuecast.labels``)."""
    params = {k: v for k, v in (run.params or {}).items() if k != "selection"}
    return labels.param_rows(params)


def wait_class_names() -> dict[str, str]:
    """The metrics' class labels ("[1e4,1e5s)") in words ("2 h 47 min – 1 d 4 h")."""
    edges = [humanize.duration(e) for e in WAIT_CLASS_EDGES]
    names = [f"under {edges[0]}"]
    names += [f"{lo} – {hi}" for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
    names.append(f"{edges[-1]} or more")
    return dict(zip(WAIT_CLASS_LABELS, names, strict=True))


def coverage_note(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the interval table shows, for the sentence that says why coverage is the same
    for every method: per level the lowest and highest coverage, the jobs, the uncalibrated."""
    levels = sorted({i["level"] for r in rows for i in r["intervals"]})
    spread = []
    for level in levels:
        cov = [i["coverage"] for r in rows for i in r["intervals"]
               if i["level"] == level and i.get("coverage") is not None]  # fmt: skip
        if cov:
            spread.append({"level": level, "low": min(cov), "high": max(cov)})
    first = rows[0]["intervals"][0] if rows and rows[0]["intervals"] else {}
    return {
        "levels": spread,
        "jobs": rows[0].get("jobs") if rows else None,
        "uncalibrated": first.get("uncalibrated"),
    }


urlpatterns = [
    path("runs/", runs, name="runs"),
    path("runs/evaluations/<int:pk>/", evaluation_detail, name="evaluation-page"),
]
