"""APQ's history index: each queue's jobs in start order, laid out so that a target's history
is a slice, not a gather (docs/apq.md, "History and structure"; the speed notes in
docs/results.md, "Speed").

A target's history is the latest ``history_size`` jobs of its queue that started by ``t``
and arrived before it (rows ``< n_before``). Nearly always those rows are one contiguous run
of the queue's start order (only a job that arrived at the target's own second and started
at once can fall out), so the block's feature matrix and waits are *views* of per-queue
arrays, and its column minima and maxima come from precomputed per-chunk minima and maxima
plus the two partial chunks at its ends: the same values exactly (a minimum is exact), at a
fraction of the work. Otherwise the rows are gathered as before. The histograms are gathered
only when a distributions distance asks for them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from predictor.core.state.sweep import StateSweep
from predictor.core.wait import apq_distance as dist
from predictor.core.wait.apq_instant import InstantColumns
from predictor.core.wait.params import APQParams
from predictor.core.wait.window_extremes import BlockExtremes

CHUNK = 256  # rows per precomputed min/max chunk
LOOKBACK = 256  # extra rows looked at below the window for rows >= n_before (kept as it was)


@dataclass
class QueueRows:
    """One queue's usable rows in (start, row) order and their APQ columns, contiguous;
    ``extremes`` gives the column minima and maxima of any slice of them."""

    rows: np.ndarray
    starts: np.ndarray
    x: np.ndarray
    wait: np.ndarray
    extremes: BlockExtremes

    @classmethod
    def build(cls, rows: np.ndarray, starts: np.ndarray, summary: np.ndarray, wait: np.ndarray):
        x = np.ascontiguousarray(summary[rows])
        return cls(rows, starts, x, wait[rows], BlockExtremes(x, CHUNK))

    def min_max(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Column minima and maxima of ``x[lo:hi]`` (non-empty), from whole chunks inside."""
        return self.extremes.window(lo, hi)


@dataclass
class HistoryBlock:
    """What every target with the same history shares: its rows' features, waits, weights
    (``hist``, the rows' histograms, is gathered on first use)."""

    key: tuple
    rows: np.ndarray
    weights: np.ndarray
    x: np.ndarray
    wait: np.ndarray
    x_min: np.ndarray
    x_max: np.ndarray
    sweep: StateSweep = field(repr=False)
    _hist: np.ndarray | None = field(default=None, repr=False)

    @property
    def hist(self) -> np.ndarray:
        if self._hist is None:  # np.take: the same rows as hist[rows], in 40% of its time
            self._hist = np.take(self.sweep.hist, self.rows, axis=0)
        return self._hist

    def kinds_hist(self, kinds: slice) -> np.ndarray:
        """(m, len(kinds), B) the rows' histograms of ``kinds`` only, contiguous (a chi-square
        over a strided view of :attr:`hist` costs twice as much)."""
        if self._hist is not None:
            return np.ascontiguousarray(self._hist[:, kinds])
        return self.sweep.hist[self.rows, kinds]


class HistoryIndex:
    """Per-queue rows in start order, and the adaptive-weight cache, for one trace."""

    def __init__(self, sweep: StateSweep, params: APQParams) -> None:
        a = sweep.arrays
        self.sweep, self.params = sweep, params
        self.wait = np.where(a.present, a.start - a.submit, np.nan)
        rows = np.flatnonzero(a.present)
        self.by_queue: dict[int, QueueRows] = {}
        for q in np.unique(a.queue):
            mine = rows[a.queue[rows] == q]
            order = np.lexsort((mine, a.start[mine]))
            mine = mine[order]
            self.by_queue[int(q)] = QueueRows.build(mine, a.start[mine], sweep.summary, self.wait)
        self._weights: dict[tuple[int, int], np.ndarray] = {}
        self._block: HistoryBlock | None = None
        self._local = threading.local()
        self.instant = InstantColumns()  # histogram distances shared by an instant's requests

    def scratch(self, shape: tuple[int, ...]) -> np.ndarray:
        """A float array of ``shape`` reused by this thread's next target (its distances are
        dead once combined)."""
        buf = getattr(self._local, "buf", None)
        if buf is None or buf.size < int(np.prod(shape)):
            buf = self._local.buf = np.empty(int(np.prod(shape)) + 1024)
        return buf[: int(np.prod(shape))].reshape(shape)

    def _span(self, queue: int, t: float, n_before: int) -> tuple[int, int, np.ndarray | None]:
        """(lo, hi, None) when the history is ``by_queue[queue].rows[lo:hi]``, else
        (0, 0, rows) with the history's rows (start order)."""
        q = self.by_queue.get(queue)
        if q is None:
            return 0, 0, None
        p = int(np.searchsorted(q.starts, t, side="right"))
        lo = max(0, p - self.params.history_size - LOOKBACK)
        cand = q.rows[lo:p]
        keep = cand < n_before
        if keep.all():
            return max(lo, p - self.params.history_size), p, None
        return 0, 0, cand[keep][-self.params.history_size :]

    def history(self, queue: int, t: float, n_before: int) -> np.ndarray:
        """Rows (start order) of the latest ``history_size`` jobs started by t, rows < n_before."""
        lo, hi, rows = self._span(queue, t, n_before)
        if rows is not None:
            return rows
        q = self.by_queue.get(queue)
        return q.rows[lo:hi] if q is not None else np.zeros(0, np.int64)

    def block(self, queue: int, t: float, n_before: int) -> HistoryBlock:
        """The history block of ``queue`` at ``t``, kept for the next target with the same
        history and weights (a molding arrival's candidates; consecutive log rows)."""
        lo, hi, rows = self._span(queue, t, n_before)
        wkey = self.weight_key(n_before, t)
        key = (queue, lo, hi, wkey) if rows is None else (queue, t, n_before, wkey)
        if self._block is not None and self._block.key == key:
            return self._block
        w = self.weights(queue, n_before, t)
        if rows is None:
            q = self.by_queue[queue]
            x_min, x_max = q.min_max(lo, hi)
            block = HistoryBlock(key, q.rows[lo:hi], w, q.x[lo:hi], q.wait[lo:hi], x_min, x_max,
                                 self.sweep)  # fmt: skip
        else:
            x = self.sweep.summary[rows]
            block = HistoryBlock(key, rows, w, x, self.wait[rows], x.min(axis=0), x.max(axis=0),
                                 self.sweep)  # fmt: skip
        self._block = block
        return block

    def weight_key(self, n_before: int, known_at_s: float) -> int:
        """The last multiple of ``weight_every_rows`` at or before n_before whose row had
        arrived by ``known_at_s`` (the row block whose weights a target uses)."""
        every, submit = self.params.weight_every_rows, self.sweep.arrays.submit
        block = n_before // every * every
        if block < submit.size and submit[block] > known_at_s:
            block = max(block - every, 0)  # a snapshot between two rows: the block's row is ahead
        return block

    def weights(self, queue: int, n_before: int, known_at_s: float) -> np.ndarray:
        """Weights as of row block :meth:`weight_key`.

        Tied to row blocks, not to the order of predictions, so a prediction never depends
        on which other targets were asked for.
        """
        block = self.weight_key(n_before, known_at_s)
        key = (queue, block)
        if key not in self._weights:
            submit = self.sweep.arrays.submit
            t = submit[min(block, submit.size - 1)] if submit.size else 0.0
            rows = self.history(queue, t, block)
            x, y = self.sweep.summary[rows], self.wait[rows]
            self._weights[key] = dist.spearman_weights(x, y, self.params.user_weight_keep)
        return self._weights[key]
