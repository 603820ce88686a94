"""Which request sizes molding tried, over a replay's decisions (what a molding run reports
so a user sees whether "choose the size" had anything to choose from).

The seed's candidates are the sizes a user used before plus the original
(``jobmolding.core.candidates``): a user with no earlier job at another size has only the
original, and such decisions cannot mold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any


def candidates_tried(decisions: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """Summary of the candidate sizes of every decision that recorded them.

    Parameters
    ----------
    decisions : job -> decision record with ``"candidates"`` (the sizes predicted, sorted).

    Returns
    -------
    ``{"decisions", "only_original", "mean_candidates", "max_candidates", "sizes"}``;
    ``sizes`` lists ``{"procs", "decisions"}``: each size and how many decisions tried it,
    by size.
    """
    lists = [list(d["candidates"]) for d in decisions.values() if "candidates" in d]
    if not lists:
        return {"decisions": 0, "only_original": 0, "mean_candidates": None,
                "max_candidates": 0, "sizes": []}  # fmt: skip
    counts = Counter(int(p) for sizes in lists for p in sizes)
    return {
        "decisions": len(lists),
        "only_original": sum(len(sizes) == 1 for sizes in lists),
        "mean_candidates": sum(len(sizes) for sizes in lists) / len(lists),
        "max_candidates": max(len(sizes) for sizes in lists),
        "sizes": [{"procs": p, "decisions": n} for p, n in sorted(counts.items())],
    }
