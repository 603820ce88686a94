"""The placement experiments of spec placement.md §3.3, one module per seed.

Each runner takes the shared :class:`~pyss_adapter.placement_experiments.inputs.Inputs`
and the command's options and returns ``(title, columns, rows)``; the
``placement_experiment`` command prints them as a markdown table. Replays (G2, T1, C1) use
EASY, requested estimates, default mode, the whole log (``--jobs N``: its first N jobs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyss_adapter.placement_experiments import cash, gpa, trimaran
from pyss_adapter.placement_experiments.inputs import Inputs

__all__ = ["EXPERIMENTS", "RUNNERS", "Inputs"]

Table = tuple[str, list[str], list[dict[str, Any]]]

RUNNERS: dict[str, Callable[[Inputs, dict[str, Any]], Table]] = {
    "G0": gpa.g0,
    "G1": gpa.g1,
    "G2": gpa.g2,
    "T0": trimaran.t0,
    "T1": trimaran.t1,
    "C1": cash.c1,
    "C2": cash.c2,
}
EXPERIMENTS = tuple(RUNNERS)
