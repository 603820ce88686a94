"""What runtime predictors may know at time t: the jobs that ended before t, grouped.

A :class:`GroupIndex` sorts the jobs by (group, end time) once; "the jobs of group g that ended
before t" is then one contiguous slice found by ``searchsorted``, for one query or millions.
Prefix sums over the same order give per-group past means in O(log n) (Smith templates, the
AAE of point methods). :class:`RuntimeContext` bundles a trace's arrays, loads and the three
history levels of the paper's relevant history (tuple, then user, then request size).

Leakage rule: a job counts as history at t only if ``end < t`` (strictly); its actual load is
then known too (see ``predictor.core.runtime.load``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from predictor.core.runtime.load import UsageCurve, actual_load, job_spans, predicted_load
from predictor.core.runtime.load_functions import request_size, tuple_frame
from predictor.core.runtime.params import LEVELS, RuntimeParams

LEVEL_COLUMNS = {
    "tuple": ("user_id", "size", "queue_id", "group_id"),
    "user": ("user_id",),
    "size": ("size",),
    "all": (),
}


def slice_sums(sums: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Sum over each ``[lo, hi)`` slice of a group, from :meth:`GroupIndex.prefix_sums`."""
    if sums.size == 0:
        return np.zeros(np.shape(hi))
    return np.where(hi > lo, sums[np.maximum(hi - 1, 0)], 0.0)


class GroupIndex:
    """Jobs sorted by (group code, end time), for "group g, ended before t" slices.

    keys : (n, c) integer frame of the grouping columns (c = 0 puts every job in one group).
    end_s : (n,) end times.
    """

    def __init__(self, keys: pd.DataFrame, end_s: np.ndarray) -> None:
        n = len(end_s)
        if keys.shape[1]:
            codes = keys.groupby(list(keys.columns), sort=False).ngroup().to_numpy()
            first = keys.assign(_code=codes).drop_duplicates("_code")
            self.lookup = {
                tuple(int(v) for v in row[:-1]): int(row[-1]) for row in first.to_numpy()
            }
        else:
            codes, self.lookup = np.zeros(n, dtype=np.int64), {(): 0}
        self.codes = codes
        self.order = np.lexsort((end_s, codes))
        self._t0 = float(np.min(end_s, initial=0.0))
        self._scale = float(np.max(end_s, initial=0.0)) - self._t0 + 2.0
        self._keys = codes[self.order] * self._scale + (end_s[self.order] - self._t0)
        self._starts = np.searchsorted(codes[self.order], np.arange(codes.max(initial=0) + 2))

    def code_of(self, key: tuple[int, ...]) -> int:
        """The code of a key, -1 when no job has it."""
        return self.lookup.get(tuple(int(v) for v in key), -1)

    def bounds(self, code: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)`` positions in :attr:`order`: group ``code``'s jobs with ``end < t``.

        Unknown codes (-1) give empty slices.
        """
        code = np.asarray(code, dtype=np.int64)
        t = np.asarray(t, dtype=float)
        safe = np.maximum(code, 0)
        lo = self._starts[np.minimum(safe, self._starts.size - 1)]
        query = safe * self._scale + np.clip(t - self._t0, 0.0, self._scale - 1.0)
        hi = np.searchsorted(self._keys, query, side="left")
        hi = np.where((code < 0) | (t <= self._t0), lo, np.maximum(hi, lo))
        return lo, hi

    def history(self, code: int, t: float) -> np.ndarray:
        """Rows of group ``code`` that ended before t, oldest end first."""
        lo, hi = self.bounds(np.array([code]), np.array([t]))
        return self.order[int(lo[0]) : int(hi[0])]

    def prefix_sums(self, values: np.ndarray) -> np.ndarray:
        """Running sums of ``values`` in index order, restarting at each group: entry p is
        the sum over the group's positions up to and including p.

        With ``(lo, hi)`` from :meth:`bounds` (lo is always the group's first position), the
        sum over the slice is :func:`slice_sums` ``= sums[hi - 1]`` (0 when empty): only jobs
        of the slice enter the arithmetic, never a later one (a plain prefix difference
        ``S[hi] - S[lo]`` would round differently as later jobs change).
        """
        ordered = pd.Series(np.asarray(values, dtype=float)[self.order])
        return ordered.groupby(self.codes[self.order]).cumsum().to_numpy()


@dataclass
class RuntimeContext:
    """A trace seen by runtime predictors. Rows are jobs sorted by submit time.

    Arrays are aligned with ``jobs``; ``n_tune`` rows form the tuning part (load functions and
    Smith templates are learned there only).
    """

    jobs: pd.DataFrame
    machine_procs: float
    n_tune: int
    params: RuntimeParams
    submit_s: np.ndarray = field(init=False)
    end_s: np.ndarray = field(init=False)
    known_end_s: np.ndarray = field(init=False)
    run_s: np.ndarray = field(init=False)
    req_time_s: np.ndarray = field(init=False)
    size: np.ndarray = field(init=False)
    keys: pd.DataFrame = field(init=False)
    curve: UsageCurve = field(init=False)
    pred_load: np.ndarray = field(init=False)
    actual_load: np.ndarray = field(init=False)
    levels: dict[str, GroupIndex] = field(init=False)
    _sums: dict[tuple[str, str], np.ndarray] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        jobs = self.jobs
        start, end, procs = job_spans(jobs)
        self.submit_s = jobs["submit_time"].to_numpy(dtype=float)
        self.end_s = end
        self.run_s = jobs["run_time"].to_numpy(dtype=float)
        self.req_time_s = jobs["requested_time"].to_numpy(dtype=float)
        self.size = request_size(jobs)
        self.keys = tuple_frame(jobs)
        self.curve = UsageCurve.from_spans(start, end, procs)
        self.actual_load = actual_load(self.curve, start, end, self.machine_procs)
        self.pred_load = self.load_at(self.submit_s)
        # A job whose runtime the log does not record (-1) never becomes history.
        never = float(np.max(end, initial=0.0)) + 1e7
        self.known_end_s = np.where(self.run_s >= 0, end, never)
        self.levels = {
            level: GroupIndex(self.keys[list(cols)], self.known_end_s)
            for level, cols in LEVEL_COLUMNS.items()
        }

    def load_at(self, t: np.ndarray | float) -> np.ndarray:
        """Predicted load at t (week before t, only what was known at t)."""
        return predicted_load(
            self.curve,
            np.atleast_1d(np.asarray(t, dtype=float)),
            self.machine_procs,
            self.params.load_window_s,
            self.first_submit_s,
        )

    @cached_property
    def first_submit_s(self) -> float:
        """The log's first arrival, found once (a minimum over the whole log on every call
        cost 40% of a request's predicted load)."""
        return float(self.submit_s.min()) if self.submit_s.size else 0.0

    def level_sums(
        self, level: str, name: str, values: np.ndarray | Callable[[], np.ndarray]
    ) -> np.ndarray:
        """Prefix sums of ``values`` in the order of ``levels[level]``, cached under ``name``
        (one O(n) pass per trace, then any number of O(log n) past means). ``values`` may be
        a function, called only when the sums are not cached yet."""
        key = (level, name)
        if key not in self._sums:
            self._sums[key] = self.levels[level].prefix_sums(
                values() if callable(values) else values
            )
        return self._sums[key]

    def level_codes(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Group code of each row at every level."""
        return {level: index.codes[rows] for level, index in self.levels.items()}

    def settled_at(self, t: float) -> bool:
        """Has every job of the history arrived and ended (its end known) before ``t``? Then
        every past-runtime lookup at ``t`` reads the whole history (``runtime.settled``)."""
        return (
            self.settled_from is not None and t > self.settled_from[0] and t >= self.settled_from[1]
        )

    def ended_by(self, t: float) -> int:
        """How many jobs' ends are known by ``t`` (``count(known_end_s <= t)``), by bisection
        on a sorted copy taken once: the count over the whole log cost O(jobs) a request."""
        return int(np.searchsorted(self._known_end_sorted, t, "right"))

    @cached_property
    def _known_end_sorted(self) -> np.ndarray:
        return np.sort(self.known_end_s)

    @cached_property
    def ended_order(self) -> tuple[np.ndarray, np.ndarray]:
        """(ends, rows) of the jobs with a runtime, sorted by (end, row), taken once:
        ``predictor.core.runtime.recent.recent_rows`` is then a bisection, the same rows in the
        same order as :func:`~predictor.core.accuracy.recent_order` over every end (which
        sorted the whole log at each new instant)."""
        end = np.where(self.run_s > 0, self.end_s, np.inf)
        rows = np.flatnonzero(np.isfinite(end))
        rows = rows[np.lexsort((rows, end[rows]))]
        return end[rows], rows

    @cached_property
    def settled_from(self) -> tuple[float, float] | None:
        """(last known end, last submission) of the history, taken once (None: empty)."""
        if not self.submit_s.size:
            return None
        return float(self.known_end_s.max()), float(self.submit_s.max())

    def key_codes(self, user: int, size: int, queue: int, group: int) -> dict[str, int]:
        """Group codes of a request that need not be in the trace (-1: unseen)."""
        values = {"user_id": user, "size": size, "queue_id": queue, "group_id": group}
        return {
            level: index.code_of(tuple(values[c] for c in LEVEL_COLUMNS[level]))
            for level, index in self.levels.items()
        }

    def choose_level(self, codes: dict[str, np.ndarray], t: np.ndarray) -> np.ndarray:
        """Index into ``LEVELS + ("all",)`` of the first level with ended history at t."""
        names = (*LEVELS, "all")
        choice = np.full(np.shape(t), len(names) - 1)
        for i in range(len(LEVELS) - 1, -1, -1):
            lo, hi = self.levels[names[i]].bounds(codes[names[i]], t)
            choice = np.where(hi > lo, i, choice)
        return choice


def build_context(
    jobs: pd.DataFrame,
    machine_procs: float,
    params: RuntimeParams | None = None,
    n_tune: int | None = None,
) -> RuntimeContext:
    """A :class:`RuntimeContext` with the tuning part from ``params.tune_fraction``."""
    params = params or RuntimeParams()
    jobs = jobs.sort_values("submit_time", kind="stable").reset_index(drop=True)
    if n_tune is None:
        n_tune = int(round(len(jobs) * params.tune_fraction))
    return RuntimeContext(
        jobs=jobs, machine_procs=float(machine_procs), n_tune=n_tune, params=params
    )
