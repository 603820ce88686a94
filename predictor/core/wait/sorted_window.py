"""The most recent ``size`` values, kept sorted as they come and go.

The online conformal intervals (:mod:`predictor.core.wait.intervals`) read, for every target,
the sorted scores of the last ``window`` known jobs. Sorting the window afresh per target
costs ``O(w log w)`` and a copy of the window each time; here a value entering or leaving
moves the values above it by one place in one buffer (a ``memmove``), and a target with no
newly known job between it and the previous one reads the same sorted view. The view holds
the same values in ascending order as ``np.sort`` of the window (equal values are equal
whatever their order), so every interval computed from it is the same to the bit.
"""

from __future__ import annotations

from collections import deque

import numpy as np


class SortedWindow:
    """A sliding window of the last ``size`` floats and its values in ascending order.

    NaN is refused (it has no place in a sorted order).
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.size = size
        self._order: deque[float] = deque()
        self._sorted = np.empty(size)

    def __len__(self) -> int:
        return len(self._order)

    def append(self, value: float) -> None:
        """Add ``value``; past ``size`` values, the oldest leaves."""
        value = float(value)
        if value != value:
            raise ValueError("a sorted window cannot hold NaN")
        buf, n = self._sorted, len(self._order)
        if n == self.size:
            old = self._order.popleft()
            at = int(buf[:n].searchsorted(old, side="left"))
            buf[at : n - 1] = buf[at + 1 : n]
            n -= 1
        at = int(buf[:n].searchsorted(value, side="right"))
        buf[at + 1 : n + 1] = buf[at:n]
        buf[at] = value
        self._order.append(value)

    def sorted(self) -> np.ndarray:
        """The window's values in ascending order (a view: valid until the next append)."""
        return self._sorted[: len(self._order)]
