"""PNG plots of a molding evaluation (matplotlib, Agg backend: no display needed).

Drawn from the stored result (``plot_data`` and the per-class figures), so the command and
the API draw the same images: the load over a 3.5-day window (the seed's Figure 10), the
mean response by CPU-hours class (Figures 7 and 9) and the request sizes before and after
molding (Figure 8).
"""

from __future__ import annotations

import io
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

PLOTS = ("load", "response_by_class", "sizes")
STRATEGY_ORDER = ("baseline", "molding", "delay")


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    return buf.getvalue()


def _strategies(names: Any) -> list[str]:
    return [s for s in STRATEGY_ORDER if s in names]


def load_plot(result: dict[str, Any]) -> bytes:
    data = result["plot_data"]["load"]
    fig, ax = plt.subplots(figsize=(8, 3.2))
    for name in _strategies(data["series"]):
        series = data["series"][name]
        hours = [k * data["bin_s"] / 3600.0 for k in range(len(series))]
        ax.plot(hours, series, label=name, linewidth=1.2)
    ax.set(xlabel=f"hours from t = {data['t0_s'] / 86400:.1f} days", ylabel="load")
    ax.set_ylim(0, 1.05)
    ax.set_title("Load over 3.5 days (30-minute bins)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return _png(fig)


def response_by_class_plot(result: dict[str, Any]) -> bytes:
    names = _strategies(result)
    classes = list(result[names[0]]["by_cpu_hours"])
    fig, ax = plt.subplots(figsize=(8, 3.2))
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        cells = result[name]["by_cpu_hours"]
        values = [cells[c].get("mean_response_s", 0.0) / 60.0 for c in classes]
        ax.bar([i + k * width for i in range(len(classes))], values, width, label=name)
    ax.set_xticks([i + width * (len(names) - 1) / 2 for i in range(len(classes))], classes)
    ax.set(xlabel="job size (CPU-hours)", ylabel="mean response (min)")
    ax.set_yscale("log")
    ax.set_title("Mean response by CPU-hours class")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def sizes_plot(result: dict[str, Any]) -> bytes:
    data = result["plot_data"]["sizes"]
    labels = [str(e) for e in data["edges"]]
    rows = {"original": data["original"], **data["as_run"]}
    fig, ax = plt.subplots(figsize=(8, 3.2))
    width = 0.8 / len(rows)
    for k, (name, counts) in enumerate(rows.items()):
        ax.bar([i + k * width for i in range(len(labels))], counts, width, label=name)
    ax.set_xticks([i + width * (len(rows) - 1) / 2 for i in range(len(labels))], labels)
    ax.set(xlabel="request size (processors, bins from 2^k)", ylabel="jobs")
    ax.set_title("Request sizes before and after")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def plot_png(result: dict[str, Any], name: str) -> bytes:
    """The PNG called ``name`` (one of ``PLOTS``) of a stored result."""
    drawers = {"load": load_plot, "response_by_class": response_by_class_plot, "sizes": sizes_plot}
    if name not in drawers:
        raise KeyError(f"unknown plot {name!r}; choose from {PLOTS}")
    return drawers[name](result)
