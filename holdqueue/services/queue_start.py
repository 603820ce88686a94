"""Queue-based starts on a live site: EASY run forward on the site's current queue with the
site bundle's predicted runtimes (``jobmolding.core.future.forward_starts``), like
``squeue --start`` or Moab's ``showstart`` but with predicted rather than requested runtimes.

Each running job ends at its predicted end (start + the point of its runtime rangeSet,
capped by its time limit); each queued job runs its predicted runtime and the scheduler
plans with its time limit. A new request is queued after every waiting job.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from jobmolding.core.future import forward_starts, predicted_ends
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import Snapshot

if TYPE_CHECKING:
    from predictor.core.bundle import FittedBundle


def _points(bundle: FittedBundle, snapshot: Snapshot, batch: RequestBatch) -> np.ndarray:
    if len(batch) == 0:
        return np.zeros(0)
    snap = replace(snapshot, history=bundle.jobs)
    return np.array([r.point_s for r in bundle.runtime.predict(snap, batch).ranges], float)


def queue_starts(
    bundle: FittedBundle,
    snapshot: Snapshot,
    requests: RequestBatch | None = None,
    requests_run_s: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(start of each waiting job, start of each request), site seconds. Each request is
    queued alone after every waiting job (candidates never wait behind each other) and
    starts no earlier than its own arrival."""
    run, wait = snapshot.running, snapshot.waiting
    ends = predicted_ends(snapshot, _points(bundle, snapshot, run.requests))
    waiting_run = _points(bundle, snapshot, wait.requests)
    start, _ = forward_starts(snapshot, ends, waiting_run)
    n_run, n_wait = len(run), len(wait)
    mine = np.zeros(0 if requests is None else len(requests))
    for k in range(mine.size):
        one = requests.take(np.array([k]))  # type: ignore[union-attr]
        run_k = np.array([float(requests_run_s[k])])  # type: ignore[index]
        s_k, _ = forward_starts(snapshot, ends, waiting_run, one, run_k)
        mine[k] = max(float(s_k[n_run + n_wait]), float(one.submit_s[0]))
    return start[n_run : n_run + n_wait], mine
