"""Candidate request sizes for molding (seed "End-to-End Predictions-Based Resource
Management Framework for Supercomputer Jobs", Section IV-A: "the request sizes used by the
user in the history of job submissions are obtained").

The candidates are the sizes this user has used before plus the original size, kept within
``[1, machine_procs]``. A user without history has only the original size, unless a grid is
asked for (not in the seed; a parameter for sites that want to mold newcomers too):

``pow2``
    every power of two in ``[1, machine_procs]``;
``range``
    the powers of two within a factor ``grid_factor`` of the original size, plus the
    original's own half and double.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from jobmolding.core.arrival import Candidates
from jobmolding.core.runtime_models import downey_factor
from predictor.core.state.snapshot import Snapshot

GRIDS = ("none", "pow2", "range")


def grid_sizes(
    original_procs: int, machine_procs: int, grid: str = "none", grid_factor: float = 4.0
) -> np.ndarray:
    """Sizes of the grid for a user without history (sorted, within the machine)."""
    if grid not in GRIDS:
        raise ValueError(f"grid must be one of {GRIDS}, got {grid!r}")
    if grid == "none":
        return np.array([int(original_procs)], dtype=np.int64)
    top = int(np.floor(np.log2(max(machine_procs, 1))))
    sizes = 2 ** np.arange(top + 1, dtype=np.int64)
    if grid == "range":
        lo, hi = original_procs / grid_factor, original_procs * grid_factor
        sizes = sizes[(sizes >= lo) & (sizes <= hi)]
        sizes = np.concatenate([sizes, [max(original_procs // 2, 1), original_procs * 2]])
    sizes = np.concatenate([sizes, [original_procs]]).astype(np.int64)
    return np.unique(sizes[(sizes >= 1) & (sizes <= machine_procs)])


def candidate_sizes(
    original_procs: int,
    used_procs: Iterable[int],
    machine_procs: int,
    grid: str = "none",
    grid_factor: float = 4.0,
) -> np.ndarray:
    """The sizes to predict for one arriving job, sorted ascending, original included.

    Parameters
    ----------
    original_procs : the size the user asked for.
    used_procs : sizes this user used before (known at the arrival).
    machine_procs : processors of the machine; larger sizes are dropped.
    grid : what a user *without* history gets: ``none`` (only the original), ``pow2`` or
        ``range`` (see the module docstring).

    Returns
    -------
    ndarray of int64, shape (K,), K >= 1.
    """
    original = int(min(max(original_procs, 1), machine_procs))
    used = np.fromiter((int(s) for s in used_procs), dtype=np.int64)
    if used.size == 0:
        return grid_sizes(original, machine_procs, grid, grid_factor)
    sizes = np.concatenate([used, [original]])
    return np.unique(sizes[(sizes >= 1) & (sizes <= machine_procs)])


#: What a user without history at a live site gets: sizes around the one asked for.
NEWCOMER_GRID = "range"


def snapshot_sizes(snapshot: Snapshot, user: int) -> np.ndarray:
    """The sizes ``user``'s jobs went to the batch system at, as ``snapshot`` knows them: the
    finished jobs of its history (``requested_procs``, else ``allocated_procs`` where the log
    gives no request; ``run_time >= 0``) and the user's
    waiting and running jobs, at the size each was submitted (a molded job at its molded
    size). Sorted, unique.

    One rule for the live site (whose history holds the finished jobs as last synced, its
    active jobs the backend's) and the replay (``snapshot_from_engine``: every released job
    in its history, the unfinished ones with ``run_time`` -1 and in the waiting or running
    set), so both offer a user the same candidates (issue 19, one path). Held jobs have not
    gone to the batch system yet and count on neither side.
    """
    hist = snapshot.history
    mine = (hist["user_id"].to_numpy() == int(user)) & (hist["run_time"].to_numpy() >= 0)
    req = hist["requested_procs"].to_numpy(np.int64)[mine]
    alloc = hist["allocated_procs"].to_numpy(np.int64)[mine]
    # a log without requested sizes (CTC-SP2: field 8 is -1) ran its jobs at the allocated
    # size, the rule of ``RequestBatch.from_jobs`` and of the replay's jobs
    parts = [np.where(req > 0, req, alloc)]
    for active in (snapshot.waiting, snapshot.running):
        parts.append(np.asarray(active.requests.procs, np.int64)[active.requests.user == int(user)])
    sizes = np.unique(np.concatenate(parts))
    return sizes[sizes > 0]


def live_candidate_sizes(
    original_procs: int, used_procs: Iterable[int], machine_procs: int
) -> np.ndarray:
    """Candidates for a job arriving at a live site: the user's used sizes and the original
    (the seed's rule), or, for a user with no history at the site, the ``range`` grid (the
    powers of two within a factor 4 of the original, its half and double), so that "let
    Queuecast choose the size" has sizes to choose among. Sorted, original included."""
    return candidate_sizes(original_procs, used_procs, machine_procs, grid=NEWCOMER_GRID)


def speedup_candidates(
    original_procs: int,
    sizes: np.ndarray,
    req_time_s: float,
    limit_s: float,
    sigma: float,
    a: float | None = None,
) -> Candidates:
    """Work-conserving candidates: at size n the job runs ``S(n0) / S(n)`` times its time at
    ``n0`` (Downey's speed-up, ``runtime_models.downey_factor``, average parallelism ``a``,
    default n0), and asks for its time limit times the same factor, capped at ``limit_s``
    (never below the original request, nor below 1 s), in whole seconds. The decision scales
    the job's own predicted runtime by the same factors."""
    sizes = np.asarray(sizes, dtype=np.int64)
    factors = np.array([downey_factor(original_procs, int(s), a, sigma) for s in sizes])
    cap = max(float(limit_s), float(req_time_s))
    # whole seconds, rounded up: a batch system takes whole seconds (the live site submits
    # them), so the replay asks for the same limit the site would
    times = np.maximum(np.ceil(np.minimum(float(req_time_s) * factors, cap)), 1.0)
    times[sizes == original_procs] = float(req_time_s)
    return Candidates(sizes, times, factors)
