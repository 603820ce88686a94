"""Row blocks for models retrained as a log is walked forward (GBM waits, quantile runtimes).

A model is trained at the arrival of a boundary row ``b`` on what was known then. Boundaries
are the rows ``n_tune + k * every`` (k any integer, positive or negative) that are >= 0, and
row 0. A target that had ``n_before`` rows arrived before it, at ``known_at_s``, uses the last
boundary ``b <= n_before`` whose row had arrived by ``known_at_s``: a log row i (``n_before =
i``, ``known_at = submit_i``) gets ``max(n_tune + every * floor((i - n_tune) / every), 0)``,
and a snapshot between two rows never gets a model trained on a later row. Depending on the
target only, never on which other targets are asked for, so batched and one-by-one answers
agree.

Inside the tuning part the blocks go on backwards from its end. Until stop 52 each tuning
row was its own boundary: a request at an instant in the first fifth of a log trained a
model for each of the ~300 jobs its trust block re-scores (over ten CPU-minutes on KTH, so
the request outlived the server's time limit). After the tuning part nothing changed.
"""

from __future__ import annotations

import numpy as np


def boundary(
    n_before: int, known_at_s: float, submit_s: np.ndarray, n_tune: int, every: int
) -> int:
    """The boundary row of a target (module docstring); 0 when none qualifies."""
    b = max(n_tune + (n_before - n_tune) // every * every, 0)
    while b > 0 and (b >= submit_s.size or submit_s[b] > known_at_s):
        b = max(b - every, 0)
    return b


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
    has arrived)."""
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    return np.arange(max(n_tune, 0), n_rows, every, dtype=np.int64)


def all_boundaries(n_rows: int, n_tune: int, every: int, tuning_part: bool = True) -> np.ndarray:
    """Every boundary any target can get, below ``n_rows``: row 0, the tuning part's blocks
    (``n_tune - k * every``) and :func:`later_boundaries` (those alone when ``tuning_part``
    is False: what ``train_ahead`` trains for a live site)."""
    later = later_boundaries(n_rows, n_tune, every)
    if not tuning_part:
        return later
    grid = np.arange(max(n_tune, 0) % every, n_rows, every, dtype=np.int64)
    return np.union1d(np.zeros(min(n_rows, 1), dtype=np.int64), grid)


def row_boundaries(rows: np.ndarray, n_tune: int, every: int) -> np.ndarray:
    """:func:`boundaries` of log rows, each at its own arrival (``n_before = i``,
    ``known_at_s = submit_i``), in one vectorised step: on a log sorted by submit time a row's
    boundary ``b <= i`` has arrived by then, so it is ``max(n_tune + every x floor((i -
    n_tune) / every), 0)``."""
    rows = np.asarray(rows, dtype=np.int64)
    return np.maximum(n_tune + (rows - n_tune) // every * every, 0)
