"""The runtime rangeSet on the predict page: its table, its median runtime and its chart on a
time axis.

A rangeSet is disjoint ranges ``[low_i, high_i]`` with probabilities ``p_i``. The page reads
it as a distribution that spreads each range's probability evenly over the range, so
``P(finished by t)`` rises inside ranges and is flat between them, and the page's runtime is
the median of that distribution: where ``P(finished by t)`` reaches 50%. The median always lies
inside a range, unlike the rangeSet's own point (``sum p_i (low_i + high_i) / 2``), which
falls between two ranges far apart; so the chart's marker, the "Predicted finish" card and
the highlighted table row show one runtime, where the chart gives it probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from queuecast import charts, humanize

Range = dict[str, float]
LOG_SPAN = 50.0  # a time axis spanning more than this ratio is logarithmic
CURVE_STEPS = 12  # points per range of the P(finished by t) curve (it is curved on a log axis)


def ordered(ranges: Sequence[Range]) -> list[Range]:
    """The ranges by start, probabilities as floats (the API's order is not promised)."""
    rows = [
        {**r, "low_s": float(r["low_s"]), "high_s": float(r["high_s"]),
         "probability": float(r["probability"])}
        for r in ranges
    ]  # fmt: skip
    return sorted(rows, key=lambda r: (r["low_s"], r["high_s"]))


def median_runtime_s(ranges: Sequence[Range]) -> float | None:
    """Where ``P(finished by t)`` reaches 50% (probability spread evenly over each range);
    None without ranges. A zero-length range holds its probability at one instant."""
    rows = ordered(ranges)
    total = sum(r["probability"] for r in rows)
    if not rows or total <= 0:
        return None
    half, seen = 0.5 * total, 0.0
    for r in rows:
        p = r["probability"]
        if p > 0 and seen + p >= half:
            return r["low_s"] + (half - seen) / p * (r["high_s"] - r["low_s"])
        seen += p
    return rows[-1]["high_s"]


def outside_share(ranges: Sequence[Range]) -> float:
    """The chance that the runtime falls in none of the ranges: 1 - their total probability.

    The service states calibrated probabilities (docs/method-choice.md): a range given 60%
    holds the runtime about 60% of the time, so one answer's total is the chance that the
    runtime lies in some range, often well under 1. 0 when they add up to 1 (or more)."""
    return max(0.0, 1.0 - sum(float(r["probability"]) for r in ranges))


def ranges_table(ranges: Sequence[Range], median_s: float | None = None) -> list[dict[str, Any]]:
    """Each range with ``P(finished by its end)``, and ``median`` on the range holding
    ``median_s``."""
    total, rows = 0.0, []
    for r in ordered(ranges):
        total += r["probability"]
        holds = median_s is not None and r["low_s"] <= median_s <= r["high_s"]
        rows.append({**r, "finished_by": min(total, 1.0), "median": holds})
    for k, row in enumerate(rows):  # a median on a shared edge marks the first range only
        row["median"] = row["median"] and not any(r["median"] for r in rows[:k])
    return rows


def finished_curve(rows: list[dict[str, Any]], log: bool) -> list[dict[str, float]]:
    """``P(finished by t)`` as points: linear inside each range, flat between ranges."""
    points: list[dict[str, float]] = []
    before = 0.0
    for r in rows:
        lo, hi, p = r["low_s"], r["high_s"], r["probability"]
        steps = CURVE_STEPS if log and hi > lo else 1
        for k in range(steps + 1):
            t = lo + (hi - lo) * k / steps
            points.append({"x": t, "y": min(before + p * k / steps, 1.0)})
        before += p
    return points


def range_boxes(rows: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Each range as a box as tall as its probability, drawn as one filled outline."""
    points: list[dict[str, float]] = []
    for r in rows:
        lo, hi, p = r["low_s"], r["high_s"], r["probability"]
        points += [{"x": lo, "y": 0.0}, {"x": lo, "y": p}, {"x": hi, "y": p}, {"x": hi, "y": 0.0}]
    return points


def marker(label: str, at_s: float, color: str, dash: list[int]) -> dict[str, Any]:
    """A vertical line from 0 to 100% at ``at_s`` (its legend entry says where)."""
    return {
        "label": label,
        "data": [{"x": at_s, "y": 0.0}, {"x": at_s, "y": 1.0}],
        "borderColor": color,
        "backgroundColor": color,
        "borderDash": dash,
        "borderWidth": 2,
        "pointRadius": 0,
        "qcMarker": at_s,
    }


def rangeset_chart(
    ranges: Sequence[Range], median_s: float | None, limit_s: float | None = None
) -> dict[str, Any]:
    """The rangeSet on a time axis (seconds; round duration ticks are drawn by the page's
    script): the ranges as boxes of their probability, ``P(finished by t)``, the median
    runtime and the time limit as vertical lines. The axis is logarithmic when the ranges
    span more than ``LOG_SPAN`` times their shortest start."""
    rows = ranges_table(ranges, median_s)
    lows = [r["low_s"] for r in rows if r["low_s"] > 0]
    top = max([r["high_s"] for r in rows] + [limit_s or 0.0, 1.0])
    log = bool(lows) and top / max(min(lows), 1.0) > LOG_SPAN
    spec = charts.line(
        [], {}, x_title="runtime", y_title="probability", x_format="duration", y_format="percent"
    )
    datasets = [
        {"label": "P(runtime in this range)", "data": range_boxes(rows), "fill": "origin",
         "borderColor": charts.color(0), "backgroundColor": "rgba(31, 95, 153, 0.35)",
         "borderWidth": 1, "pointRadius": 0},
        {"label": "P(finished by t)", "data": finished_curve(rows, log),
         "borderColor": charts.color(1), "backgroundColor": charts.color(1), "borderWidth": 2,
         "pointRadius": 0},
    ]  # fmt: skip
    if median_s is not None:
        label = f"median runtime {humanize.duration(median_s)}"
        datasets.append(marker(label, median_s, charts.color(2), []))
    if limit_s:
        label = f"time limit {humanize.duration(limit_s)}"
        datasets.append(marker(label, limit_s, "#5b6470", [6, 4]))
    spec["data"]["datasets"] = datasets
    scales = spec["options"]["scales"]
    scales["x"]["type"] = "logarithmic" if log else "linear"
    scales["y"].update({"min": 0, "max": 1})
    spec["options"]["plugins"]["legend"]["display"] = True
    spec["qc"].update(tooltip="percent", tooltipX="duration")
    return spec
