"""The replay's own predictor: waits from the simulated queue, runtimes from the simulated
history (``sim_wait`` and ``sim_runtime``).

Only what the simulated system knows at the moment of the decision is read: the engine's
queue and running jobs with their requested times, the starts that happened, the runtimes of
the jobs that finished. Never the log's waits, never a later event. It is the "cheaper
configuration" of the project's predictors used for whole-trace molding replays: the
projection is the ``sim`` wait method (what ``squeue --start`` answers) and the runtime side
is the seed's load-aware rangeSet; docs/molding.md says why APQ is not used here (speed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jobmolding.core.sim_runtime import SimulatedRuntimes, SimulatedUsage
from jobmolding.core.sim_wait import projected_waits
from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.state.request import RequestBatch


def expected_ends(engine: Any, now: float, ended: frozenset[int]) -> tuple[list[float], list[int]]:
    """Expected ends and sizes of the running jobs not in ``ended``, as the scheduler expects
    them: start + estimate; past it, the requested end; past that too, in one second."""
    ends, procs = [], []
    est, requested = engine.est, engine.requested
    for j, start in engine.running_jobs():
        if j in ended:
            continue
        end = start + est[j]
        if end <= now:
            end = max(start + requested[j], now + 1.0)
        ends.append(end)
        procs.append(engine.procs[j])
    return ends, procs


class SimStatePredictor:
    """Waits by projection of the simulated queue, runtime rangeSets from simulated history.

    Parameters
    ----------
    requests : the log's requests aligned with the engine's jobs (queue and group columns).
    machine_procs : processors.
    t0_s : the first arrival (the load curve starts there).
    runtime_params : the rangeSet settings (default: the project's).

    Runtime rangeSets use the load known at the decision, whatever the arrival time, so a
    later arrival gets the same runtimes (``same_runtime_later``: the policy may skip a
    future prediction that cannot pass the delay threshold).
    """

    same_runtime_later = True

    def __init__(
        self,
        requests: RequestBatch,
        machine_procs: int,
        t0_s: float,
        runtime_params: RuntimeParams | None = None,
    ) -> None:
        self.requests = requests
        self.machine_procs = int(machine_procs)
        self.usage = SimulatedUsage(machine_procs, t0_s)
        self.runtimes = SimulatedRuntimes(runtime_params)

    def on_start(self, engine: Any, j: int, now: float) -> None:
        self.usage.event(now, engine.procs[j])

    def on_finish(self, engine: Any, j: int, now: float) -> None:
        p = engine.procs[j]
        self.usage.event(now, -p)
        load = self.usage.mean_load(engine.start_s[j], now)
        r = self.requests
        self.runtimes.finished(
            int(r.user[j]), int(p), int(r.queue[j]), int(r.group[j]), engine.runtime[j], load
        )

    def warm_up(self, engine: Any, now: float) -> None:
        self.runtimes.fit()

    def predict(
        self, engine: Any, now: float, requests: RequestBatch, ended: frozenset[int]
    ) -> tuple[np.ndarray, list[RangeSet]]:
        at = float(requests.submit_s[0])
        ends, procs = expected_ends(engine, now, ended)
        queue = engine.queue
        waits = projected_waits(
            at,
            self.machine_procs,
            np.asarray(ends, float),
            np.asarray(procs, np.int64),
            np.asarray([engine.procs[j] for j in queue], np.int64),
            np.asarray([engine.est[j] for j in queue], float),
            requests.procs,
            requests.req_time_s,
        )
        load = self.usage.predicted_load(now, self.runtimes.params.load_window_s)
        sets = [
            self.runtimes.rangeset(
                int(requests.user[k]),
                int(requests.procs[k]),
                int(requests.queue[k]),
                int(requests.group[k]),
                float(requests.req_time_s[k]),
                load,
            )
            for k in range(len(requests))
        ]
        return waits, sets
