"""The seed's stack merge of runtime ranges (``002``, runtime section, step 4): sort the ranges
by low; merge a range into the top of the stack when their overlap exceeds ``threshold`` of
the smaller range.

:func:`merge_stack_plain` is the seed's loop. :func:`merge_ranges` gives its floats in numpy
passes: the top's high is always the largest high so far, so only a range reaching past every
earlier high can start a new one, and whether it does depends on the loop's state only
through the low of the last range started. Between two starts that low is fixed, so the
ranges after a start are tested together, a block at a time, until one does not merge
(:func:`_starts`). The sort by (low, high) is a plain sort by low where no two lows are
equal (``tests/core/test_rangeset.py`` checks both against the loop and lexsort, bit for
bit).

On HPC2N's longest relevant histories (14,000 ranges) the loop over the ranges that reach
past and ``np.lexsort`` took most of a rangeSet's time (docs/results.md, "Speed").
"""

from __future__ import annotations

import numpy as np

Merged = tuple[np.ndarray, np.ndarray, np.ndarray]

FAST_MERGE_MIN = 64  # below this many ranges the plain loop is the cheaper
FIRST_BLOCK = 32  # ranges tested at once after a start (doubling while none starts)
DENSE_GAP = 24  # starts closer than this many ranges apart on average: loop over the rest


def merge_ranges(low: np.ndarray, high: np.ndarray, threshold: float = 0.5) -> Merged:
    """``(low, high, group)`` of the merged ranges; ``group[i]`` is the merged range that
    input i went into. A zero-length range overlaps fully when it lies inside the other."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    n = low.size
    finite = bool(np.isfinite(low).all() and np.isfinite(high).all())
    order = low_high_order(low, high) if finite else np.lexsort((high, low))
    lo_s, hi_s = low[order], high[order]
    if n < FAST_MERGE_MIN or not 0.0 <= threshold <= 0.5 or not finite or (hi_s < lo_s).any():
        return merge_stack_plain(lo_s, hi_s, order, threshold)
    reach = np.maximum.accumulate(hi_s)  # the top's high after each range
    before = np.empty(n)
    before[0], before[1:] = -np.inf, reach[:-1]
    past = np.flatnonzero(hi_s > before)  # the only ranges that may start a new one
    start = np.zeros(n, dtype=bool)
    start[past[_starts(lo_s[past], hi_s[past], before[past], threshold)]] = True
    firsts = np.flatnonzero(start)
    lasts = np.append(firsts[1:] - 1, n - 1)
    group = np.empty(n, dtype=int)
    group[order] = np.cumsum(start) - 1
    return lo_s[firsts], reach[lasts], group


def low_high_order(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``np.lexsort((high, low))`` for finite arrays: when no two lows are equal, the order
    of a plain sort by low (5 times quicker on 14,000 ranges); else lexsort's own (sorting
    only the runs of equal lows again cost more than lexsort where most lows repeat)."""
    order = np.argsort(low)
    lo = low[order]
    return np.lexsort((high, low)) if (lo[1:] == lo[:-1]).any() else order


def _starts(lo: np.ndarray, hi: np.ndarray, top_h: np.ndarray, threshold: float) -> np.ndarray:
    """Indices of the ranges (sorted by low, each reaching past ``top_h``, every earlier high)
    that start a new merged range: the first always; a later one unless

        inter > threshold x smaller  (smaller > 0),   inter >= 0  (smaller = 0),

    with ``inter = top_h - lo`` and ``smaller = min(hi - lo, top_h - top_l)``, ``top_l`` the low
    of the last range started (the loop's expressions, element for element). Where starts
    come closer than ``DENSE_GAP`` ranges apart (a response set's separate ranges, say), a
    block costs more than looping over its ranges, so the rest is looped over."""
    inter, width = top_h - lo, hi - lo
    found = [0]
    k, block = 1, FIRST_BLOCK
    while k < lo.size:
        end = min(k + block, lo.size)
        span = top_h[k:end] - lo[found[-1]]
        smaller = np.where(width[k:end] < span, width[k:end], span)
        part = inter[k:end]
        merges = np.where(smaller > 0, part > threshold * smaller, part >= 0)
        stop = np.flatnonzero(~merges)
        if not stop.size:
            k, block = end, 2 * block
            continue
        found.append(k + int(stop[0]))
        k, block = found[-1] + 1, FIRST_BLOCK
        if stop.size * DENSE_GAP > end - k:  # more starts likely close by (an estimate:
            # the block's later tests used the earlier low): the loop is the cheaper
            found += _looped(lo[k:], width[k:], inter[k:], top_h[k:], lo[found[-1]], threshold, k)
            break
    return np.asarray(found, dtype=np.int64)


def _looped(
    lo: np.ndarray,
    width: np.ndarray,
    inter: np.ndarray,
    top_h: np.ndarray,
    top_l: float,
    threshold: float,
    offset: int,
) -> list[int]:
    """:func:`_starts`'s test one range at a time, from the last start's low ``top_l``
    (indices shifted by ``offset``)."""
    out = []
    rows = range(offset, offset + lo.size)
    for i, low, w, gap, th in zip(
        rows, lo.tolist(), width.tolist(), inter.tolist(), top_h.tolist(), strict=True
    ):
        span = th - top_l
        smaller = w if w < span else span
        if (gap > threshold * smaller) if smaller > 0 else gap >= 0:
            continue
        top_l = low
        out.append(i)
    return out


def merge_stack_plain(
    lo_s: np.ndarray, hi_s: np.ndarray, order: np.ndarray, threshold: float
) -> Merged:
    """:func:`merge_ranges` as the seed's plain stack loop over the ranges sorted by
    (low, high) (``order`` sorts the inputs)."""
    out_l: list[float] = []
    out_h: list[float] = []
    slot = []
    top_l = top_h = 0.0
    for lo, hi in zip(lo_s.tolist(), hi_s.tolist(), strict=True):
        if out_l:
            inter = (hi if hi < top_h else top_h) - lo  # lo >= top_l: sorted by low
            smaller = hi - lo if hi - lo < top_h - top_l else top_h - top_l
            if (inter > threshold * smaller) if smaller > 0 else inter >= 0:
                if hi > top_h:
                    top_h = out_h[-1] = hi
                slot.append(len(out_l) - 1)
                continue
        top_l, top_h = lo, hi
        out_l.append(lo)
        out_h.append(hi)
        slot.append(len(out_l) - 1)
    group = np.empty(lo_s.size, dtype=int)
    group[order] = slot
    return np.array(out_l), np.array(out_h), group
