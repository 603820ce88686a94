"""Row blocks for models retrained as a log is walked forward (GBM waits, quantile runtimes).

A model is trained at the arrival of a boundary row ``b`` on what was known then. Boundaries
are the tuning end ``n_tune`` and every ``every`` rows after it. A target that had ``n_before``
rows arrived before it, at ``known_at_s``, uses the last boundary ``b <= n_before`` whose row
had arrived by ``known_at_s``: a log row i (``n_before = i``, ``known_at = submit_i``) gets
``min(n_tune + every * floor((i - n_tune) / every), i)``, and a snapshot between two rows never
gets a model trained on a later row. Depending on the target only, never on which other
targets are asked for, so batched and one-by-one answers agree.
"""

from __future__ import annotations

import numpy as np


def boundary(
    n_before: int, known_at_s: float, submit_s: np.ndarray, n_tune: int, every: int
) -> int:
    """The boundary row of a target (module docstring); 0 when none qualifies."""
    step = max(n_before - n_tune, 0) // every
    b = min(n_tune + step * every, n_before)
    while b > 0 and (b >= submit_s.size or submit_s[b] > known_at_s):
        b = b - every if b > n_tune else b - 1
    return max(b, 0)


def boundaries(
    n_before: np.ndarray, known_at_s: np.ndarray, submit_s: np.ndarray, n_tune: int, every: int
) -> np.ndarray:
    """:func:`boundary` of each target."""
    return np.array(
        [
            boundary(int(n), float(t), submit_s, n_tune, every)
            for n, t in zip(n_before, known_at_s, strict=True)
        ],
        dtype=np.int64,
    )


def later_boundaries(n_rows: int, n_tune: int, every: int) -> np.ndarray:
    """Every boundary a target after the tuning part can get (``n_before >= n_tune``): the
    tuning end and every ``every`` rows after it, below ``n_rows`` (a boundary is a row that
    has arrived). Targets inside the tuning part get their own row (:func:`boundary`)."""
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    return np.arange(max(n_tune, 0), n_rows, every, dtype=np.int64)


def row_boundaries(rows: np.ndarray, n_tune: int, every: int) -> np.ndarray:
    """:func:`boundaries` of log rows, each at its own arrival (``n_before = i``,
    ``known_at_s = submit_i``), in one vectorised step: on a log sorted by submit time a row's
    boundary ``b <= i`` has arrived by then, so it is ``min(n_tune + every x floor((i -
    n_tune) / every), i)`` (the row itself inside the tuning part)."""
    rows = np.asarray(rows, dtype=np.int64)
    step = np.maximum(rows - n_tune, 0) // every
    return np.minimum(n_tune + step * every, rows)
