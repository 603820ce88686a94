"""Column minima and maxima of sliding windows of rows, read from kept block extremes.

IBL (``predictor.core.wait.ibl``) scales each numeric attribute by its range over the window
of the last ``history_size`` known jobs, and APQ (``apq_index``) normalises its summaries by
their range over a queue's history block; every target of an evaluation or a replay's pool
has its own window. Reducing 4,000 rows per window costs O(window). With the minimum and
maximum of each block of ``block`` consecutive rows kept (one pass over the rows), window
``[a, b)`` is the extreme of its whole blocks and of its two partial edges:

    min(rows[a:b]) = min( min(rows[a:a']), min(block_min[a'/B : b'/B]), min(rows[b':b]) )

with ``a'`` the first block boundary at or after ``a`` and ``b'`` the last at or before
``b``: O(window / B + B) per window. Minimum and maximum are exact (no rounding), so every
range equals the direct reduction bit for bit, NaN included (both propagate it).
"""

from __future__ import annotations

import numpy as np

BLOCK = 64


class BlockExtremes:
    """Column (min, max) of any window of ``values`` (n, f).

    Parameters
    ----------
    values : (n, f) rows; kept by reference (not copied), so it must not change.
    block : rows per kept block.
    """

    def __init__(self, values: np.ndarray, block: int = BLOCK) -> None:
        self.values = values
        self.block = int(block)
        n_blocks = len(values) // self.block
        whole = values[: n_blocks * self.block].reshape(n_blocks, self.block, values.shape[1])
        self.block_min = whole.min(axis=1, initial=np.inf)
        self.block_max = whole.max(axis=1, initial=-np.inf)

    def window(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """(min, max) over ``values[start:stop]`` by column; the window must not be empty."""
        start, stop = max(int(start), 0), min(int(stop), len(self.values))
        if stop <= start:
            raise ValueError(f"empty window [{start}, {stop})")
        first = -(-start // self.block)  # the first whole block
        last = stop // self.block  # one past the last whole block
        if last - first < 2:  # short: reduce the rows themselves
            rows = self.values[start:stop]
            return rows.min(axis=0), rows.max(axis=0)
        edges = np.concatenate(
            [self.values[start : first * self.block], self.values[last * self.block : stop]]
        )
        lo = np.concatenate([edges, self.block_min[first:last]]).min(axis=0)
        hi = np.concatenate([edges, self.block_max[first:last]]).max(axis=0)
        return lo, hi
