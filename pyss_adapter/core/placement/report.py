"""Text and table views of a placement block, shared by the commands (spec placement.md §4.5)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["allocation_frame", "placement_lines"]


def placement_lines(block: dict[str, Any]) -> list[str]:
    """The placement table printed after the replay's statistics."""
    cluster, usage = block["cluster"], block["usage"]
    if block["framing"] == "cluster":
        nodes = (
            f"{cluster['nodes']} nodes x {cluster['cores_per_node']} cores "
            f"(last {cluster['last_node_cores']}; {cluster['source']})"
        )
    else:
        nodes = f"pool nodes of {cluster['pool_cores']} cores"
    options = ", ".join(f"{k}={v}" for k, v in block["options"].items())
    lines = [
        "",
        f"placement {block['name']} ({block['framing']}): {nodes}; {options}",
        f"usage: model {usage['model']}, knowledge {usage['knowledge']}, seed {usage['seed']}; "
        f"imputed from the user {usage['imputed_user']}, from the trace "
        f"{usage['imputed_trace']}; clipped (f6 > f4) {usage['clipped']}"
        + (f"; filled with {usage['fill']}" if usage.get("fill") is not None else ""),
        f"{'metric':<28}{'value':>14}",
    ]
    for key, value in block["metrics"].items():
        if value is None:
            continue
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        lines.append(f"{key:<28}{text:>14}")
    return lines


def allocation_frame(result: Any) -> pd.DataFrame:
    """``job_id,node,cores,t_on,t_off`` of every piece (``--placement-log``)."""
    log = result.placement_log
    return pd.DataFrame(
        {
            "job_id": np.asarray(result.jobs.job_id)[log["job"]],
            "node": log["node"],
            "cores": log["cores"],
            "t_on": log["t_on"],
            "t_off": log["t_off"],
        }
    )
