"""Placement plots (PNG, matplotlib) for the commands: machines against violation rate
(placement_experiment G1/G2), node utilisation over time and credits over time (replay
--placement-plot). The replay page draws the same series as SVG (pages.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["plot_credits", "plot_heatmap", "plot_machines_vs_q"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_heatmap(block: dict[str, Any], path: str) -> None:
    """Node x time heat map of utilisation (% of the node's cores), from the block's series."""
    plt = _pyplot()
    rows = np.asarray(block["series"]["util_heatmap"], dtype=np.float64)
    days = rows.shape[1] * float(block["series"]["heatmap_bin_s"]) / 86400.0
    fig, ax = plt.subplots(figsize=(9, 3.6))
    image = ax.imshow(
        rows,
        aspect="auto",
        origin="lower",
        cmap="viridis",
        vmin=0,
        vmax=100,
        extent=(0, days, -0.5, rows.shape[0] - 0.5),
        interpolation="nearest",
    )
    fig.colorbar(image, ax=ax, label="utilisation %")
    ax.set_xlabel("days from the first submission")
    ax.set_ylabel("node" if block["framing"] == "cluster" else "pool node")
    ax.set_title(f"{block['name']}: node utilisation over time", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_credits(block: dict[str, Any], path: str) -> bool:
    """Mean credit balance across nodes with +- one std (T3 placements); False if none."""
    series = block["series"]
    if not series.get("credit_mean"):
        return False
    plt = _pyplot()
    mean, std = np.asarray(series["credit_mean"]), np.asarray(series["credit_std"])
    days = np.arange(len(mean)) * float(series["bin_s"]) / 86400.0
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ax.plot(days, mean, lw=1, label="mean over nodes")
    ax.fill_between(days, mean - std, mean + std, alpha=0.3, label="+- std across nodes")
    ax.set_xlabel("days from the first submission")
    ax.set_ylabel("CPU credits")
    ax.set_title(f"{block['name']}: credits over time", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_machines_vs_q(rows: list[dict[str, Any]], path: str, experiment: str) -> None:
    """Machines used against violation rate, one panel per data source (log q axis)."""
    plt = _pyplot()
    group = "source" if experiment == "G1" else "corr"
    x_key, y_key = ("m_abs", "q") if experiment == "G1" else ("open_nodes", "q")
    # G1: the main grid only (Best Fit at the source's own capacity, no sweep rows)
    base_c = {str(r[group]): r.get("c") for r in reversed(rows)}
    rows = [r for r in rows if r.get("fit", "BF") == "BF" and r.get("c") == base_c[str(r[group])]]
    groups = sorted({str(r[group]) for r in rows})
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.6), squeeze=False)
    for ax, name in zip(axes[0], groups, strict=True):
        for family, marker in (
            ("gpa", "o"),
            ("cantelli", "s"),
            ("av", "^"),
            ("perc", "D"),
            ("pool", "v"),
        ):
            pts = [
                r
                for r in rows
                if str(r[group]) == name
                and r["estimator" if experiment == "G1" else "policy"]
                .replace("pool-", "")
                .startswith(family)
                and "(" not in str(r.get("estimator", ""))
            ]
            if pts:
                ax.scatter(
                    [r[x_key] for r in pts],
                    [max(r[y_key], 1e-6) for r in pts],
                    marker=marker,
                    label=family,
                )
        ax.set_yscale("log")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("machines (mean)")
        ax.set_ylabel("violation rate q (0 drawn at 1e-6)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
