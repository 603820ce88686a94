"""Browser page of one molding run: live progress, then the strategies side by side.

Reads the row behind ``GET /api/molding-runs/{id}/`` (its figures and its ``plot_data``)
and draws with Chart.js what the run's PNG plots show: load over a 3.5-day window, mean
response (and wait) by CPU-hours class, request sizes before and after molding.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import path

from jobmolding.core.policy import STRATEGIES
from jobmolding.core.runtime_models import RUNTIME_MODELS
from jobmolding.models import MoldingRun
from jobmolding.services import REPLAY_WAIT_METHODS, RUNTIME_METHODS
from predictor.pages.runs import LIST_LIMIT
from predictor.services.predict import service_methods
from queuecast import charts, labels
from queuecast.longrun import Status
from queuecast.permissions import visible_to

FIGURES = (
    "jobs",
    "work_ratio",
    "mean_wait_s",
    "mean_response_s",
    "median_response_s",
    "mean_bounded_slowdown",
    "utilisation",
    "molded_share",
    "delayed_share",
    "mean_delay_s",
)


def runs_block(user: Any) -> dict[str, Any]:
    """The molding runs form and list on the runs page (``page_parts.RUNS_LIST``)."""
    runs = visible_to(MoldingRun.objects.select_related("trace", "owner"), user)
    return {
        "strategies": list(STRATEGIES),
        "runtime_models": list(RUNTIME_MODELS),
        "wait_methods": list(REPLAY_WAIT_METHODS),
        "runtime_methods": list(RUNTIME_METHODS),
        "live_methods": service_methods(),
        "runs": runs[:LIST_LIMIT],
    }


@login_required
def molding_detail(request: HttpRequest, pk: int) -> HttpResponse:
    runs = visible_to(MoldingRun.objects.select_related("trace", "owner"), request.user)
    run = get_object_or_404(runs, pk=pk)
    context: dict[str, Any] = {
        "nav": "runs",
        "run": run,
        "busy": run.status in (Status.PENDING, Status.RUNNING),
    }
    if run.status == Status.DONE:
        context.update(present(run.result or {}))
    return render(request, "runs/molding.html", context)


STRATEGY_ORDER = ("baseline", "molding", "delay")


def in_strategy_order(names: Any) -> list[str]:
    """Baseline first, then molding and delay: PostgreSQL's jsonb does not keep key order."""
    rank = {n: i for i, n in enumerate(STRATEGY_ORDER)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def strategies_of(result: dict[str, Any]) -> list[str]:
    return in_strategy_order(
        k for k, v in result.items() if isinstance(v, dict) and "mean_response_s" in v
    )


def present(result: dict[str, Any]) -> dict[str, Any]:
    """Rows per strategy (with the change of mean response against the baseline) and charts."""
    names = strategies_of(result)
    base = (result.get("baseline") or {}).get("mean_response_s")
    rows = []
    for name in names:
        fig = result[name]
        change = fig["mean_response_s"] / base - 1.0 if base else None
        rows.append({"strategy": name, **{k: fig.get(k) for k in FIGURES}, "change": change})
    plots = result.get("plot_data") or {}
    return {
        "rows": rows,
        "work_warnings": work_warnings(rows),
        "params": labels.param_rows(result.get("params") or {}),
        "grid": (result.get("params") or {}).get("grid", "none"),
        "tried": tried_view(result, names),
        "charts": {**class_charts(result, names), **plot_charts(plots)},
    }


#: Beyond this change of the CPU work done, a gain may come from work that was not done.
WORK_TOLERANCE = 0.10


def work_warnings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The strategies whose work ratio (CPU work run over the log's) is off by more than
    ``WORK_TOLERANCE``: their response figures are not for the same work."""
    return [
        {"strategy": r["strategy"], "work_ratio": r["work_ratio"]}
        for r in rows
        if r.get("work_ratio") is not None and abs(1.0 - r["work_ratio"]) > WORK_TOLERANCE
    ]


def tried_view(result: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The sizes each strategy tried (``jobmolding.core.tried``): a line per strategy and one
    table, a row per size, a column per strategy."""
    summaries = {n: result[n]["candidates"] for n in names if result[n].get("candidates")}
    for s in summaries.values():
        s["only_original_share"] = s["only_original"] / s["decisions"] if s["decisions"] else None
    sizes = sorted({row["procs"] for s in summaries.values() for row in s["sizes"]})
    counts = {n: {r["procs"]: r["decisions"] for r in s["sizes"]} for n, s in summaries.items()}
    table = [{"procs": p, "counts": [counts[n].get(p, 0) for n in summaries]} for p in sizes]
    return {"summaries": summaries, "table": table}


def class_charts(result: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """Mean response and mean wait per CPU-hours class, one bar per strategy."""
    first = result[names[0]].get("by_cpu_hours") if names else None
    if not first:
        return {}
    classes = list(first)

    def series(key: str) -> dict[str, list]:
        return {n: [result[n]["by_cpu_hours"].get(c, {}).get(key) for c in classes] for n in names}

    words = [labels.cpu_hours_words(c) for c in classes]
    return {
        what: charts.bar(
            words,
            series(f"mean_{what}_s"),
            x_title="CPU-hours class (processors × runtime)",
            y_title=f"mean {what}",
            y_format="duration",
        )
        for what in ("response", "wait")
    }


def plot_charts(plots: dict[str, Any]) -> dict[str, Any]:
    """The load window and the request-size histograms from the run's ``plot_data``."""
    out: dict[str, Any] = {}
    load = plots.get("load") or {}
    if load.get("series"):
        bin_s = float(load["bin_s"])
        n = len(next(iter(load["series"].values())))
        hours = [round(i * bin_s / 3600.0, 2) for i in range(n)]
        out["load"] = charts.line(
            hours,
            {k: load["series"][k] for k in in_strategy_order(load["series"])},
            x_title="hours into the window",
            y_title="busy share of the machine",
            y_format="percent",
        )
    sizes = plots.get("sizes") or {}
    if sizes.get("edges"):
        edges = sizes["edges"]
        bins = [f"{lo}–{2 * lo - 1}" if lo > 1 else "1" for lo in edges]
        series = {
            "requested": sizes["original"],
            **{f"as run ({k})": v for k, v in (sizes.get("as_run") or {}).items()},
        }
        out["sizes"] = charts.bar(bins, series, x_title="processors", y_title="jobs")
    return out


urlpatterns = [path("runs/molding/<int:pk>/", molding_detail, name="molding-page")]
