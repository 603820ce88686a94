"""The system state at one instant: the waiting and running jobs, and what is known.

Seed 002, "System state": at a job's arrival the state is the set of waiting jobs W and running
jobs R (with their requests, how long they have waited or run) and the finished history.

Two times are kept apart:

- ``known_at_s`` is the last instant whose information the snapshot may contain: waits of jobs
  that had started by then, runtimes of jobs that had ended by then. Nothing later.
- a request's ``submit_s`` is when it arrives; it may be later than ``known_at_s`` (a delayed
  submission asks about the future from what is known now). A method must never read past
  ``known_at_s``.

Snapshots are built from a stored log at time t (``from_log``), from the simulator's queue and
running sets during a replay (``pyss_adapter.core.snapshot``), or from a site's live queue
(``from_live``). The three are tested against each other on the same instant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from predictor.core.state.request import RequestBatch


@dataclass(frozen=True)
class ActiveJobs:
    """Jobs in the queue or running at the snapshot's instant (columns, row k = job k).

    ``start_s`` is +inf for a job still waiting; ``elapsed_s`` is how long a running job has run
    (0 while waiting).
    """

    requests: RequestBatch
    start_s: np.ndarray

    def __len__(self) -> int:
        return len(self.requests)


@dataclass(frozen=True)
class Snapshot:
    """The system at ``time_s``, knowing what was known at ``known_at_s`` (<= time_s).

    waiting, running : the jobs in the queue and running at ``time_s``.
    history : finished or started jobs whose facts are known at ``known_at_s``, as a frame with
              the SWF columns (``traces.core.swf.SWF_FIELDS``); a job's wait is there only if it
              had started by ``known_at_s``, its runtime only if it had ended by then
              (otherwise -1).
    machine_procs : processors of the machine (or the site's partition).
    """

    time_s: float
    known_at_s: float
    waiting: ActiveJobs
    running: ActiveJobs
    history: pd.DataFrame
    machine_procs: int

    @property
    def free_procs(self) -> int:
        return int(self.machine_procs - self.running.requests.procs.sum())
