"""Gradient boosting with quantile loss whose leaf values come from one partition per leaf.

Quantile (pinball) loss is not differentiable, so scikit-learn's histogram gradient boosting
sets each new leaf's value by a line search: the ``quantile``-th percentile of the residuals
``y - raw_prediction`` of the leaf's samples (``_update_leaves_values``), through
``PinballLoss.fit_intercept_only`` and ``np.percentile``. For the small arrays of a leaf
``np.percentile``'s general machinery (axes, methods, weights, dtype checks) costs far more
than the order statistics it reads: the runtime method's three quantile models call it about
1,900 times per model (60 trees of up to 31 leaves), 19 of 225 profiled seconds of a replay
(docs/results.md, issue 18, "Fourteenth round").

:func:`linear_percentile` is ``np.percentile(values, percent)`` with its default method
("linear", Hyndman & Fan's 7th) written for one 1-d array: virtual index
``v = (n - 1) * percent / 100``, the order statistics ``a = x_(floor v)`` and
``b = x_(floor v + 1)`` (both the largest when ``v >= n - 1``) from one ``np.partition``, and
numpy's own interpolation ``_lerp``: ``a + (b - a) * g`` for ``g = v - floor v < 0.5``, else
``b - (b - a) * (1 - g)``; NaN when any value is NaN. The same operations in the same order,
so the same float (tested against ``np.percentile`` bit for bit, and whole models against
scikit-learn's own). :class:`QuantileBoost` is ``HistGradientBoostingRegressor`` with that
leaf update for ``loss="quantile"`` and nothing else changed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn._loss.loss import PinballLoss
from sklearn.ensemble import HistGradientBoostingRegressor


def linear_percentile(values: np.ndarray, percent: float) -> np.float64:
    """``np.percentile(values, percent)`` of a 1-d float array (module doc), bit for bit,
    as numpy's scalar (scikit-learn reshapes the baseline it answers).

    values : (n,) with n >= 1; not modified.
    percent : in [0, 100].
    """
    n = values.size
    v = (n - 1) * (percent / 100.0)
    if v >= n - 1:  # numpy takes the largest value for both neighbours
        lo = hi = n - 1
        gamma = v + 1.0  # numpy's v - previous index, that index being -1
    else:
        lo = math.floor(v)
        hi, gamma = lo + 1, v - lo
    part = np.partition(values, sorted({0, lo, hi, n - 1}))  # numpy's kth: equal values land alike
    if math.isnan(part[n - 1]):  # NaN sorts last: numpy answers NaN
        return np.float64(math.nan)
    a, b = float(part[lo]), float(part[hi])
    diff = b - a
    return np.float64(b - diff * (1.0 - gamma) if gamma >= 0.5 else a + diff * gamma)


class PinballLeaves(PinballLoss):
    """``PinballLoss`` whose unweighted intercept is :func:`linear_percentile`."""

    def fit_intercept_only(self, y_true: np.ndarray, sample_weight: Any = None) -> Any:
        if sample_weight is not None or np.ndim(y_true) != 1 or np.size(y_true) == 0:
            return super().fit_intercept_only(y_true, sample_weight)
        return linear_percentile(np.asarray(y_true, dtype=np.float64), 100 * self.closs.quantile)


class QuantileBoost(HistGradientBoostingRegressor):
    """``HistGradientBoostingRegressor`` whose quantile loss updates leaves through
    :class:`PinballLeaves` (module doc); every parameter and every other loss as
    scikit-learn's."""

    def _get_loss(self, sample_weight: Any) -> Any:
        if self.loss == "quantile":
            return PinballLeaves(sample_weight=sample_weight, quantile=self.quantile)
        return super()._get_loss(sample_weight)
