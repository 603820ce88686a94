"""Runtime rangeSets inside a replay, from what the simulated system knows.

The seed's load-aware rangeSet method ("End-to-End Predictions-Based Resource Management
Framework for Supercomputer Jobs", runtime section; ``predictor.core.runtime.rangeset``)
fed by the replay instead of the log: a job's runtime and its actual load (the mean load
over its run) become history when it *finishes in the simulation*; the load predicted for an
arrival at t is the load of the week before t in the simulation; the load functions are
fitted once, on the jobs finished by the end of the warm-up part. So a molded job's drawn
runtime, not its log runtime, is what later predictions learn from.

Levels of the relevant history, most specific first: <user, size, queue, group>, user, size,
every job; with none, ``[1 s, requested]``.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from predictor.core.runtime.load_functions import fit_load_functions
from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.rangeset import RangeSet, build_rangeset, relevant_count

LEVEL_NAMES = ("tuple", "user", "size", "all")


class SimulatedUsage:
    """The cumulative CPU curve ``F(t)`` of a replay, extended event by event."""

    def __init__(self, machine_procs: int, t0_s: float) -> None:
        self.machine_procs = float(machine_procs)
        self.t0_s = float(t0_s)
        self._t = np.zeros(1024)
        self._f = np.zeros(1024)
        self._t[0] = t0_s
        self._n = 1
        self.busy = 0.0

    def event(self, t_s: float, delta_procs: float) -> None:
        """``delta_procs`` processors start (+) or stop (-) being used at ``t_s``."""
        last = self._n - 1
        cpu = self._f[last] + self.busy * (t_s - self._t[last])
        if self._n == self._t.size:
            self._t = np.concatenate([self._t, np.zeros(self._t.size)])
            self._f = np.concatenate([self._f, np.zeros(self._f.size)])
        self._t[self._n], self._f[self._n] = t_s, cpu
        self._n += 1
        self.busy += delta_procs

    def cpu_until(self, t_s: np.ndarray | float) -> np.ndarray:
        """``F(t)``; past the last event the current busy processors keep running."""
        n = self._n
        t = np.asarray(t_s, dtype=float)
        inside = np.interp(t, self._t[:n], self._f[:n], left=0.0)
        beyond = self._f[n - 1] + self.busy * (t - self._t[n - 1])
        return np.where(t > self._t[n - 1], beyond, inside)

    def mean_load(self, t0_s: float, t1_s: float) -> float:
        if t1_s <= t0_s:
            return self.busy / self.machine_procs
        used = self.cpu_until(np.array([t0_s, t1_s]))
        return float((used[1] - used[0]) / ((t1_s - t0_s) * self.machine_procs))

    def predicted_load(self, t_s: float, window_s: float) -> float:
        """Seed: the mean of the week's 30-minute interval loads = the load over the week."""
        return self.mean_load(max(t_s - window_s, self.t0_s), t_s)


class _Series:
    """Runtimes and loads of one history level's key, in finish order."""

    __slots__ = ("run", "load", "_cache")

    def __init__(self) -> None:
        self.run: list[float] = []
        self.load: list[float] = []
        self._cache: tuple[int, np.ndarray, np.ndarray] | None = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._cache is None or self._cache[0] != len(self.run):
            self._cache = (len(self.run), np.asarray(self.run), np.asarray(self.load))
        return self._cache[1], self._cache[2]


class SimulatedRuntimes:
    """Runtime history of a replay and the seed's rangeSet over it."""

    def __init__(self, params: RuntimeParams | None = None, load_step: float = 0.01) -> None:
        self.params = params or RuntimeParams()
        self._levels: list[dict[tuple, _Series]] = [defaultdict(_Series) for _ in range(4)]
        self._rows: list[tuple[int, int, int, int, float, float]] = []
        self.slopes_ = np.zeros(0)
        self.intercepts_ = np.zeros(0)
        self.load_step = load_step
        self._cache: dict[tuple, RangeSet] = {}

    @staticmethod
    def _keys(user: int, size: int, queue: int, group: int) -> tuple[tuple, ...]:
        return ((user, size, queue, group), (user,), (size,), ())

    def finished(
        self, user: int, size: int, queue: int, group: int, runtime_s: float, load: float
    ) -> None:
        """A job ended in the simulation after ``runtime_s`` at actual load ``load``."""
        self._rows.append((user, size, queue, group, runtime_s, load))
        for level, key in zip(self._levels, self._keys(user, size, queue, group), strict=True):
            series = level[key]
            series.run.append(float(runtime_s))
            series.load.append(float(load))

    def fit(self) -> SimulatedRuntimes:
        """Learn the load functions from the jobs finished so far (the warm-up part)."""
        if not self.params.use_load_functions or not self._rows:
            return self
        rows = np.array(self._rows, dtype=float)
        frame = pd.DataFrame(
            {
                "user_id": rows[:, 0].astype(np.int64),
                "requested_procs": rows[:, 1].astype(np.int64),
                "allocated_procs": rows[:, 1].astype(np.int64),
                "queue_id": rows[:, 2].astype(np.int64),
                "group_id": rows[:, 3].astype(np.int64),
                "run_time": rows[:, 4],
            }
        )
        functions = fit_load_functions(frame, rows[:, 5], self.params)
        self.slopes_ = np.array([f.slope for f in functions])
        self.intercepts_ = np.array([f.intercept for f in functions])
        return self

    def _level_of(self, user: int, size: int, queue: int, group: int) -> tuple[str, _Series] | None:
        """The most specific level with history for this request."""
        keys = self._keys(user, size, queue, group)
        for name, level, key in zip(LEVEL_NAMES, self._levels, keys, strict=True):
            series = level.get(key)
            if series is not None and series.run:
                return name, series
        return None

    def rangeset(
        self, user: int, size: int, queue: int, group: int, requested_s: float, load: float
    ) -> RangeSet:
        """The rangeSet of a request at predicted load ``load``.

        The load is rounded to ``load_step`` so that answers can be reused until the level's
        history grows (a 0.005 load difference moves a prediction by at most 0.5% of the
        steepest load function's slope: far below the ranges' 20% width).
        """
        params = self.params
        found = self._level_of(user, size, queue, group)
        if found is None:
            upper = requested_s if requested_s > 0 else params.min_runtime_s
            return RangeSet(
                np.array([params.min_runtime_s]), np.array([upper]), np.array([1.0]), "none", 0
            )
        name, series = found
        if self.load_step > 0:
            load = round(load / self.load_step) * self.load_step
        key = (name, user, size, queue, group, len(series.run), requested_s, load)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if len(self._cache) > 200_000:
            self._cache.clear()
        self._cache[key] = out = self._build(name, series, requested_s, load)
        return out

    def _build(self, name: str, series: _Series, requested_s: float, load: float) -> RangeSet:
        params = self.params
        runs, loads = series.arrays()
        recent_runs, recent_loads = runs[::-1], loads[::-1]
        n = relevant_count(recent_runs, params.history_start, params.history_overlap)
        return build_rangeset(
            recent_runs[:n],
            recent_loads[:n],
            runs,
            load,
            requested_s,
            (self.slopes_, self.intercepts_),
            params,
            level=name,
        )
