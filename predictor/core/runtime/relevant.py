"""The seed's relevant history of a group slice without reading the whole slice.

Seed 002 ("End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs",
rangeSets, relevant history): start with the 10 most recent jobs of the target's group and
extend back until ``max - min`` of their runtimes reaches about 90% of the whole history's
(:func:`predictor.core.runtime.rangeset.relevant_count`). Read directly, every target reads
its group's whole past: at HPC2N a user's tuple holds thousands of ended jobs, and the
relevant history is usually a few dozen of them.

Here the runtimes are kept in the group index's order (:class:`GroupIndex`: by group, then
end time), so a target's past is one slice ``[lo, hi)``. The whole slice's minimum and
maximum come from block extremes (``predictor.core.wait.window_extremes``, exact), and the
running spans are computed over the most recent ``64``, then ``512``, ... jobs until one
reaches the bound: the running span over the first ``k`` jobs depends on those ``k`` only, so
the first position that reaches the bound is the same as in the whole slice, and so is the
count (tested against ``relevant_count`` on random groups, bit for bit).
"""

from __future__ import annotations

import numpy as np

from predictor.core.runtime.history import GroupIndex
from predictor.core.runtime.rangeset import relevant_count
from predictor.core.wait.window_extremes import BlockExtremes

FIRST_READ = 64  # recent jobs read first; each further read is 8 times longer


class RelevantHistory:
    """One level's runtimes in its :class:`GroupIndex` order, with their block extremes.

    index : the level's group index.
    run_s : (n,) runtimes by row.
    """

    def __init__(self, index: GroupIndex, run_s: np.ndarray) -> None:
        self.order = index.order
        self.runs = np.ascontiguousarray(np.asarray(run_s, dtype=float)[index.order])
        self.extremes = BlockExtremes(self.runs[:, None])

    def rows(self, lo: int, hi: int, start: int, overlap: float) -> np.ndarray:
        """The relevant rows of slice ``[lo, hi)``, most recent first: the first
        ``relevant_count(runs of the slice, most recent first, start, overlap)`` of them."""
        return self.order[hi - self.count(lo, hi, start, overlap) : hi][::-1]

    def count(self, lo: int, hi: int, start: int, overlap: float) -> int:
        """``relevant_count`` of the slice's runtimes, most recent first (module doc)."""
        size = hi - lo
        if size <= start:
            return int(size)
        low, high = self.extremes.window(lo, hi)
        need = overlap * (high[0] - low[0])
        take = max(FIRST_READ, start + 1)
        while take < size:
            recent = self.runs[hi - take : hi][::-1]
            spans = np.maximum.accumulate(recent) - np.minimum.accumulate(recent)
            reached = np.flatnonzero(spans >= need - 1e-9)
            if reached.size:
                return int(max(start, reached[0] + 1))
            take *= 8
        return relevant_count(self.runs[lo:hi][::-1], start, overlap)
