"""``P(start within T)``: the share of recent jobs predicted like this one that started within T.

For a request whose wait is predicted ``p`` at instant ``t``, take the last ``WINDOW`` (2,000)
jobs that started by ``t``, each predicted at its own arrival (``p_j``, known wait ``y_j``); of
them the ``NEIGHBOURS`` (200) whose prediction is nearest on a log scale,

    d_j = |log(1 + p_j) - log(1 + p)|     (ties: the jobs that arrived last first),

and answer ``P = #{j among them : y_j <= T} / NEIGHBOURS``: a nearest-neighbour estimate of the
waits' distribution given the prediction, read off jobs whose outcome is known. Fewer recent
jobs than ``NEIGHBOURS``: all of them.

Until stop 58 ``P`` was the split-conformal reading of the errors of the 300 jobs that started
last, shifted by ``p`` (``P = #{e_j <= T - p} / 300`` with ``e_j = y_j - p_j``). A shift by the
request's own prediction moves the jobs that waited nothing (a large share) above T, so it
understated: at 1,500 random KTH-SP2 test arrivals, when it said under 10% (3.4% on average)
17.5% of the jobs started within T; its expected calibration error was 0.091, this rule's is
0.014 (docs/results.md, "Stop 58"; ``benchmarks/p_within_calibration.py``).

``NEIGHBOURS`` and ``WINDOW`` were chosen on the tuning parts of KTH-SP2, SDSC-SP2 and CTC-SP2
(600 arrivals each, nine T from 1 min to 1 day) among k of 50, 100, 200 and 400 and windows of
1,000 and 2,000, by the mean Brier score ``mean (P - [y <= T])^2``: a proper score, so it asks
for calibration and sharpness together. The calibration error alone keeps falling as k grows
towards the whole window, whose share is the same for every request. The interval is read
off the same neighbours (:mod:`predictor.core.wait.local_interval`, since stop 59), so nothing
more is predicted.

Since stop 61 the service reads the neighbours among the last ``WINDOW`` jobs that *arrived*
by ``t``, started or still waiting, with :mod:`predictor.core.wait.km_within` (the
Kaplan-Meier estimate: a job still waiting counts as waiting at least as long as it has so
far); where all of them started that is this share. The started ones alone overstated the
chance where many still waited: a new site, a log's busy months (docs/results.md "Stop 61").
"""

from __future__ import annotations

from typing import Any

import numpy as np

NEIGHBOURS = 200
WINDOW = 2000


def nearest(log_pool: np.ndarray, rows: np.ndarray, log_pred: float, k: int) -> np.ndarray:
    """Positions in the pool of the ``k`` jobs whose ``log(1 + p_j)`` (``log_pool``) is nearest
    ``log_pred``, ties to the latest arrivals (largest ``rows``), in no particular order: a
    partition and the ties at its edge, O(m) instead of a sort."""
    d = np.abs(log_pool - log_pred)
    if k >= d.size:
        return np.arange(d.size)
    edge = np.partition(d, k - 1)[k - 1]
    inside = np.flatnonzero(d < edge)
    ties = np.flatnonzero(d == edge)
    latest = ties[np.argsort(rows[ties], kind="stable")[ties.size - (k - inside.size) :]]
    return np.concatenate([inside, latest])


def neighbours(pred_s: np.ndarray, recent_pred_s: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """(n, min(k, m)) indices into ``recent_pred_s`` (m,) (in arrival order) of the ``k``
    recent jobs whose prediction is nearest each of ``pred_s`` (n,) on the log scale, ties
    to the jobs that arrived last (:func:`nearest` per request)."""
    pred = np.log1p(np.maximum(np.atleast_1d(np.asarray(pred_s, dtype=float)), 0.0))
    recent = np.log1p(np.maximum(np.asarray(recent_pred_s, dtype=float), 0.0))
    rows, k = np.arange(recent.size), min(int(k), recent.size)
    return np.array([nearest(recent, rows, float(p), k) for p in pred], dtype=np.int64).reshape(
        pred.size, k
    )


def shifted_errors(wait_s: np.ndarray, pred_s: np.ndarray, p: Any) -> np.ndarray:
    """``max(p + (y_j - p_j), 0)``: the neighbours' errors added to the prediction ``p``
    (a float, or an (n, 1) column against (n, k) neighbours). The wait interval reads them
    (``local_interval.scores``), and ``p_within(..., residual=True)`` counts them."""
    return np.maximum(wait_s - pred_s + p, 0.0)


def p_within(
    pred_s: np.ndarray,
    recent_pred_s: np.ndarray,
    recent_wait_s: np.ndarray,
    within_s: float,
    k: int = NEIGHBOURS,
    residual: bool = False,
) -> np.ndarray:
    """(n,) ``P(wait <= within_s)`` for each of ``pred_s``: the share of its :func:`neighbours`
    among the recent jobs (predictions ``recent_pred_s``, waits ``recent_wait_s``, in arrival
    order) whose wait was at most ``within_s``.

    ``residual``: the share whose error added to the prediction, ``max(p + y_j - p_j, 0)``, was
    at most ``within_s`` (what the wait interval reads since stop 60). Measured for the
    chance to start and not taken: on the tuning parts its Brier score was lower on KTH-SP2
    (0.1821 against 0.1846) and higher on SDSC-SP2 (0.1595 against 0.1567), its calibration
    error higher on both (``benchmarks/p_within_calibration.py --errors``).

    Raises ``ValueError`` when no recent job is known."""
    wait = np.asarray(recent_wait_s, dtype=float)
    if wait.size == 0:
        raise ValueError("no started jobs to compare with (no recent job is known)")
    near = neighbours(pred_s, recent_pred_s, k)
    if residual:
        p = np.maximum(np.asarray(pred_s, dtype=float), 0.0)[:, None]
        told = np.maximum(np.asarray(recent_pred_s, dtype=float), 0.0)
        return (shifted_errors(wait[near], told[near], p) <= float(within_s)).mean(axis=1)
    return (wait[near] <= float(within_s)).mean(axis=1)
