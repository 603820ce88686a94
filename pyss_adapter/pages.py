"""Browser page of one replay: live progress while it runs, then statistics and charts.

Reads the same row as ``GET /api/replays/{id}/``; the numbers come from the simulator's
observers (``pyss_adapter.core.stats``), only humanised and drawn here.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import path
from django.utils.safestring import mark_safe

from pyss_adapter.models import Replay
from queuecast import charts, labels
from queuecast.longrun import Status
from queuecast.permissions import visible_to

WAIT_WORDS = {"0": "no wait"}  # the simulator's first wait class: jobs that started at once
MAX_POINTS = 2000  # utilisation bins drawn at most (longer series are averaged in blocks)


@login_required
def replay_detail(request: HttpRequest, pk: int) -> HttpResponse:
    replays = visible_to(Replay.objects.select_related("trace", "owner"), request.user)
    replay = get_object_or_404(replays, pk=pk)  # another user's replay is a 404, as in the API
    context: dict[str, Any] = {
        "nav": "runs",
        "replay": replay,
        "busy": replay.status in (Status.PENDING, Status.RUNNING),
        "result": replay.result or {},
    }
    if replay.status == Status.DONE:
        context["charts"] = replay_charts(replay.result or {})
        block = (replay.result or {}).get("placement")
        if block:
            context["placement"] = placement_context(block)
    return render(request, "runs/replay.html", context)


def replay_charts(result: dict[str, Any]) -> dict[str, Any]:
    """Chart specs for whatever the replay's statistics carry."""
    out: dict[str, Any] = {}
    series = result.get("utilisation_series") or {}
    if series.get("utilisation"):
        out["utilisation"] = utilisation_chart(series)
    for key, title in (("wait_histogram", "jobs"), ("response_by_cpu_hours", "mean response")):
        block = result.get(key)
        if isinstance(block, dict) and block.get("labels"):
            fmt = "duration" if key.startswith("response") else ""
            words = [
                labels.cpu_hours_words(c) if key.startswith("response") else WAIT_WORDS.get(c, c)
                for c in block["labels"]
            ]
            out[key] = charts.bar(words, {title: block["values"]}, y_format=fmt, y_title=title)
    return out


def utilisation_chart(series: dict[str, Any]) -> dict[str, Any]:
    """Utilisation per bin against days since the first submission (block-averaged)."""
    values = series["utilisation"]
    bin_s = float(series.get("bin_s") or 1800.0)
    block = max(1, -(-len(values) // MAX_POINTS))
    means = [
        sum(values[i : i + block]) / len(values[i : i + block])
        for i in range(0, len(values), block)
    ]
    days = [round(i * block * bin_s / 86400.0, 3) for i in range(len(means))]
    spec = charts.line(
        days,
        {"utilisation": means},
        x_title="days since the first submission",
        y_title="busy processors",
        y_format="percent",
    )
    spec["options"]["scales"]["y"]["max"] = 1
    return spec


def placement_context(block: dict[str, Any]) -> dict[str, Any]:
    """The placement card row, its metrics table and charts (spec placement.md §4.5)."""
    series = block.get("series") or {}
    bin_s = float(series.get("bin_s") or 1800.0)
    charts_out: dict[str, Any] = {}
    lines = {
        k: series[k]
        for k in ("active_nodes", "hot_nodes", "open_nodes", "over_nodes")
        if series.get(k)
    }
    if lines:
        days = [round(i * bin_s / 86400.0, 3) for i in range(len(next(iter(lines.values()))))]
        names = {k: k.replace("_", " ") for k in lines}
        charts_out["nodes"] = charts.line(
            days,
            {names[k]: v for k, v in lines.items()},
            x_title="days since the first submission",
            y_title="nodes",
        )
    if series.get("credit_mean"):
        days = [round(i * bin_s / 86400.0, 3) for i in range(len(series["credit_mean"]))]
        charts_out["credits"] = charts.line(
            days,
            {"mean credits": series["credit_mean"], "std across nodes": series["credit_std"]},
            x_title="days since the first submission",
            y_title="CPU credits",
        )
    metrics = {k: v for k, v in (block.get("metrics") or {}).items() if v is not None}
    return {
        "block": block,
        "metrics": metrics,
        "charts": charts_out,
        "heatmap": heatmap_svg(series.get("util_heatmap"), float(series.get("heatmap_bin_s") or 0)),
    }


def heatmap_svg(rows: list[list[float]] | None, bin_s: float) -> str:
    """Node utilisation over time as an inline SVG: one row per node, white 0% to dark 100%."""
    if not rows:
        return ""
    width, cell_h = 800, max(2, min(12, 360 // len(rows)))
    cell_w = width / max(len(rows[0]), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" width="{width}" '
        f'height="{cell_h * len(rows)}" role="img" aria-label="node utilisation over time">'
    ]
    for i, row in enumerate(rows):
        for k, value in enumerate(row):
            if value != value:  # NaN: past the end
                continue
            shade = int(255 - 2.2 * min(max(value, 0.0), 100.0))
            parts.append(
                f'<rect x="{k * cell_w:.1f}" y="{i * cell_h}" width="{cell_w + 0.5:.1f}" '
                f'height="{cell_h}" fill="rgb({shade},{shade},255)"><title>node {i}, '
                f"day {k * bin_s / 86400:.1f}: {value:.0f}%</title></rect>"
            )
    parts.append("</svg>")
    return mark_safe("".join(parts))


urlpatterns = [path("runs/replays/<int:pk>/", replay_detail, name="replay-page")]
