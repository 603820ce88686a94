"""APQ's histogram distances that depend on the instant only, kept per instant (issue 18:
"per-instant work is done once per instant, not once per request").

Four of the six state histograms are the same for every request arriving at one instant
(``histograms.INSTANT_KINDS``: the running jobs' three, and the waiting jobs' waits, which
the request enters as 0). Their chi-square distances to the history block's histograms, and
the normalisation of each column by its largest value, are therefore the same for every
request asked about that instant; only the two kinds the request enters (its requested time
and processors among the waiting jobs') are computed per request. Each column is computed on
its own in both cases, so the numbers are the ones
:func:`predictor.core.wait.apq_distance.hist_distances_fixed` gives, to the bit.

The kept columns are keyed by the history block (its queue and rows) and the four histograms
themselves, so two instants with the same queue contents share them and a changed queue never
reads another's. A small LRU bounded by bytes: at HPC2N's 4,000-job history an entry is
128 kB (four float64 columns), so the default keeps 384 instants, a trace browsed at a few
hundred instants or a live site's "now" between two queue changes.

The block's histograms of the two request kinds are the same for every request of the
instant too: they are gathered (a contiguous copy) once per block and kept in a second LRU
(320 kB an entry at HPC2N's 4,000 jobs; the gather was 3% of a warm API answer there).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from predictor.core.lru import LRU
from predictor.core.state import histograms as hg
from predictor.core.wait import apq_distance as dist

MAX_BYTES = 48 * 2**20
REQUEST_BYTES = 32 * 2**20  # a block's two request kinds: 320 kB at HPC2N's 4,000 jobs


class InstantColumns:
    """(m, 4) normalised distances of the instant's histograms to a block's, and their
    column std (for the spread), kept per (block, histograms); and the block's own
    histograms of the two kinds a request enters, gathered once per block."""

    def __init__(self, max_bytes: int = MAX_BYTES, request_bytes: int = REQUEST_BYTES) -> None:
        self.kept: LRU[tuple[np.ndarray, np.ndarray]] = LRU(max_bytes=max_bytes)
        self.request_hist: LRU[np.ndarray] = LRU(max_bytes=request_bytes)

    def request_kinds(self, block_key: tuple, history: Callable[[slice], np.ndarray]) -> np.ndarray:
        """(m, 2, B) the block ``block_key``'s histograms of ``histograms.REQUEST_KINDS``,
        ``history(kinds)``, gathered once and shared read-only by the instant's requests."""
        found = self.request_hist.get(block_key)
        if found is not None:
            return found
        made = np.ascontiguousarray(history(hg.REQUEST_KINDS))
        made.setflags(write=False)
        return self.request_hist.put(block_key, made, made.nbytes)

    def get(
        self, block_key: tuple, target_hist: np.ndarray, history: Callable[[slice], np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(columns, their std along the rows) for ``target_hist``'s instant kinds against the
        block ``block_key``'s histograms of those kinds, ``history(kinds)`` ((m, 4, B), asked
        for only when they are not kept)."""
        key = (block_key, target_hist[hg.INSTANT_KINDS].tobytes())
        found = self.kept.get(key)
        if found is not None:
            return found
        cols = dist.hist_distances_kinds(target_hist, history(hg.INSTANT_KINDS), hg.INSTANT_KINDS)
        made = (cols, dist.column_std(cols))
        for kept in made:  # shared by the instant's requests, across threads: read only
            kept.setflags(write=False)
        return self.kept.put(key, made, cols.nbytes)
