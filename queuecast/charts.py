"""Chart.js specs built on the server, drawn by ``static/js/queuecast.js``.

A page puts a spec into ``{{ spec|json_script:"id" }}`` and a ``<canvas data-chart="id">``;
the script adds humanised tick labels for the axes named in ``qc``. Labels that are
durations are formatted here with :mod:`queuecast.humanize`, so pages and charts agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

PALETTE = ("#1f5f99", "#d9822b", "#2e8b57", "#a42323", "#7b4fa0", "#5b6470", "#c4a000")


def color(k: int) -> str:
    return PALETTE[k % len(PALETTE)]


def bar(
    labels: Sequence[str],
    series: dict[str, Sequence[float | None]],
    *,
    y_title: str = "",
    x_title: str = "",
    y_format: str = "",
    stacked: bool = False,
) -> dict[str, Any]:
    """Grouped (or stacked) bars; ``y_format`` is ``"duration"``, ``"percent"`` or ``""``."""
    datasets = [
        {"label": name, "data": list(values), "backgroundColor": color(k)}
        for k, (name, values) in enumerate(series.items())
    ]
    return _spec("bar", list(labels), datasets, x_title, y_title, y_format, stacked=stacked)


def line(
    x: Sequence[float],
    series: dict[str, Sequence[float | None]],
    *,
    x_title: str = "",
    y_title: str = "",
    x_format: str = "",
    y_format: str = "",
) -> dict[str, Any]:
    """Lines over a numeric x axis (points ``{x, y}``), one per series."""
    datasets = [
        {
            "label": name,
            "data": [{"x": a, "y": b} for a, b in zip(x, values, strict=True)],
            "borderColor": color(k),
            "backgroundColor": color(k),
            "pointRadius": 0,
            "borderWidth": 1.5,
        }
        for k, (name, values) in enumerate(series.items())
    ]
    spec = _spec("line", None, datasets, x_title, y_title, y_format)
    spec["options"]["scales"]["x"]["type"] = "linear"
    if x_format == "duration":
        spec["qc"]["durationAxes"].append("x")
    return spec


def _spec(
    kind: str,
    labels: list[str] | None,
    datasets: list[dict[str, Any]],
    x_title: str,
    y_title: str,
    y_format: str,
    *,
    stacked: bool = False,
) -> dict[str, Any]:
    scales: dict[str, Any] = {
        "x": {"title": {"display": bool(x_title), "text": x_title}, "stacked": stacked},
        "y": {
            "title": {"display": bool(y_title), "text": y_title},
            "stacked": stacked,
            "beginAtZero": True,
        },
    }
    qc: dict[str, Any] = {"durationAxes": [], "percentAxes": [], "tooltip": y_format}
    if y_format == "duration":
        qc["durationAxes"].append("y")
    elif y_format == "percent":
        qc["percentAxes"].append("y")
    data: dict[str, Any] = {"datasets": datasets}
    if labels is not None:
        data["labels"] = labels
    return {
        "type": kind,
        "data": data,
        "options": {"scales": scales, "plugins": {"legend": {"display": len(datasets) > 1}}},
        "qc": qc,
    }
