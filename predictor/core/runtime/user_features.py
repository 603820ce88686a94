"""The user's recent record at a target's time, as features of the quantile GBM (docs/runtime.md).

A user's next runtime follows their last ones (Tsafrir, Etsion and Feitelson 2007, "Backfilling
using system-generated predictions rather than user runtime estimates", section 3: the mean of
the last two). These columns add what that mean leaves out, each from what is known at the
target's time ``t`` only:

* ``carry``: log of the last ended job's used share of its request times this request,
  ``log(run_last / req_last * req)`` (the density's part (b) for one job);
* ``same``: 1 when this request's (size, requested time) equal the last ended job's, else 0;
* ``median_k``, ``spread_k``: median and standard deviation of ``log run`` over the user's last
  ``k`` ended jobs;
* ``hit``: share of the user's ended jobs whose runtime reached 99 % of their request;
* ``since``: ``log(1 + s)``, ``s`` the seconds since the user's previous submission;
* ``active``: the user's jobs submitted before ``t`` that had not ended by ``t``.

"Ended" follows :mod:`predictor.core.runtime.history`: ``end < t`` strictly, and a job whose
runtime the log does not record never ends; submissions count when ``submit < t``. NaN where
the user has no such job. Everything is a slice of a (user, time)-sorted index found by
``searchsorted``: no loop over the history.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictor.core.runtime.history import GroupIndex, RuntimeContext, slice_sums
from predictor.core.runtime.targets import RuntimeTargets

COLUMNS = ("carry", "same", "median_k", "spread_k", "hit", "since", "active")
HIT_SHARE = 0.99  # a runtime at 99 % of its request or more "hit the limit"


@dataclass(frozen=True)
class UserTimes:
    """The user's jobs sorted by submit time and by end time (same user codes as
    ``ctx.levels["user"]``), for ``since`` and ``active``. Here every job ends, at its start
    when the log has no runtime: it no longer holds a place in the user's queue."""

    submitted: GroupIndex
    ended: GroupIndex

    @classmethod
    def of(cls, ctx: RuntimeContext) -> UserTimes:
        users = ctx.keys[["user_id"]]
        return cls(GroupIndex(users, ctx.submit_s), GroupIndex(users, ctx.end_s))


def last_k(
    sorted_values: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    k: int,
    order: np.ndarray | None = None,
) -> np.ndarray:
    """(n, k) the last ``k`` values of each ``[lo, hi)`` slice, newest first, NaN past its start.

    ``order``: the values are in log order and ``order`` sorts them (an index's ``order``);
    only the ``n * k`` values read are gathered, not the whole history re-ordered."""
    pos = hi[:, None] - 1 - np.arange(k)[None, :]
    if sorted_values.size == 0:
        return np.full(pos.shape, np.nan)
    at = np.clip(pos, 0, None)
    return np.where(pos >= lo[:, None], sorted_values[at if order is None else order[at]], np.nan)


def nan_median(values: np.ndarray) -> np.ndarray:
    """Row medians ignoring NaN (NaN for an all-NaN row), without the all-NaN warning."""
    n = (~np.isnan(values)).sum(axis=1)
    ordered = np.sort(values, axis=1)  # NaN sort last
    rows = np.arange(values.shape[0])
    low = ordered[rows, np.maximum((n - 1) // 2, 0)]
    high = ordered[rows, np.maximum(n // 2, 0)]
    return np.where(n > 0, (low + high) / 2.0, np.nan)


def nan_std(values: np.ndarray) -> np.ndarray:
    """Row standard deviations ignoring NaN (NaN for an all-NaN row)."""
    n = (~np.isnan(values)).sum(axis=1)
    mean = np.nansum(values, axis=1) / np.maximum(n, 1)
    square = np.nansum((values - mean[:, None]) ** 2, axis=1) / np.maximum(n, 1)
    return np.where(n > 0, np.sqrt(square), np.nan)


def user_record(
    ctx: RuntimeContext, targets: RuntimeTargets, times: UserTimes, k: int = 5
) -> np.ndarray:
    """(n, 7) the columns of :data:`COLUMNS` for each target at its time ``targets.t_s``.

    ``times`` is :meth:`UserTimes.of` ``(ctx)``, built once per fitted log.
    """
    index = ctx.levels["user"]
    user = targets.codes["user"]
    lo, hi = index.bounds(user, targets.t_s)
    has = hi > lo
    last = index.order[np.maximum(hi - 1, 0)] if index.order.size else np.zeros_like(hi)
    req = targets.req_time_s
    with np.errstate(divide="ignore", invalid="ignore"):
        share = ctx.run_s[last] / ctx.req_time_s[last]
        carry = np.where(has & (ctx.req_time_s[last] > 0) & (req > 0), share * req, np.nan)
        carry = np.log(np.maximum(carry, 1.0))
    same = (ctx.size[last] == targets.requests.procs) & (ctx.req_time_s[last] == req)
    # Per call only what the targets read is gathered: re-ordering or scanning the whole
    # history here cost about 1 ms a request on HPC2N's 200k jobs (growing with the log).
    recent = np.log(np.maximum(last_k(ctx.run_s, lo, hi, k, order=index.order), 1.0))
    hits = slice_sums(ctx.level_sums("user", "hit_limit", lambda: _hit_limit(ctx)), lo, hi)
    sub_lo, sub_hi = times.submitted.bounds(user, targets.t_s)
    end_lo, end_hi = times.ended.bounds(user, targets.t_s)
    sub_order = times.submitted.order
    previous = ctx.submit_s[sub_order[np.maximum(sub_hi - 1, 0)]] if sub_order.size else 0.0
    since = np.where(sub_hi > sub_lo, np.log1p(np.maximum(targets.t_s - previous, 0.0)), np.nan)
    return np.column_stack(
        [
            carry,
            np.where(has, same.astype(float), np.nan),
            nan_median(recent),
            nan_std(recent),
            np.where(has, hits / np.maximum(hi - lo, 1), np.nan),
            since,
            np.where(user >= 0, (sub_hi - sub_lo) - (end_hi - end_lo), np.nan),
        ]
    )


def _hit_limit(ctx: RuntimeContext) -> np.ndarray:
    """1.0 for a job whose runtime reached :data:`HIT_SHARE` of its request, else 0.0."""
    return ((ctx.req_time_s > 0) & (ctx.run_s >= HIT_SHARE * ctx.req_time_s)).astype(float)


__all__ = ["COLUMNS", "UserTimes", "last_k", "nan_median", "nan_std", "user_record"]
