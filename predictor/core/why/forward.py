"""EASY forward from a queue, with a request arriving last: the replay engine's own EASY.

The same forward simulation as ``squeue --start`` estimates and the ``sim`` wait method
(``pyss_adapter.core.start_estimate``): no further arrivals, every job runs for its
estimate, the request joins the end of the queue. :func:`start_of` stops as soon as the
request's start is known; :func:`profile` runs the queue once and answers the start of any
size and estimate (for searching changes); :func:`plan` runs every queued job to its start
(the predicted starts and ends of the jobs ahead), or reads them off the queue's kept run
when the request starts after every job ahead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from predictor.core.lru import LRU
from predictor.core.why.queue import QueueState

if TYPE_CHECKING:
    from pyss_adapter.core.start_profile import StartProfile


def start_of(state: QueueState, procs: int, estimate_s: float) -> float:
    """Predicted start (absolute seconds) of a request of ``procs`` for ``estimate_s``."""
    from pyss_adapter.core.start_estimate import forward_easy

    procs = int(min(max(procs, 1), state.machine_procs))
    running = list(zip((state.now_s + state.remaining_s()).tolist(),
                       state.running_procs.tolist(), strict=True))  # fmt: skip
    queue = list(zip(state.queue_procs.tolist(), state.queue_estimate_s.tolist(), strict=True))
    queue.append((procs, max(float(estimate_s), 1.0)))
    return state.now_s + forward_easy(
        state.now_s, running, queue, len(queue) - 1, state.machine_procs
    )


def profile(state: QueueState, until_s: float = float("inf")) -> StartProfile:
    """One forward run of ``state``'s queue without the request: :func:`start_of` for any
    size and estimate through ``StartProfile.start_s`` (equal answers; ``inf`` for a start
    after ``until_s``, the passes after it not run)."""
    from pyss_adapter.core.start_profile import easy_profile

    running = list(zip((state.now_s + state.remaining_s()).tolist(),
                       state.running_procs.tolist(), strict=True))  # fmt: skip
    queue = list(zip(state.queue_procs.tolist(), state.queue_estimate_s.tolist(), strict=True))
    return easy_profile(state.now_s, running, queue, state.machine_procs, until_s)


class Profiles:
    """:func:`profile` runs kept per queue (an LRU, keyed by the queue's contents): the run
    depends on the queue only, not on the request, so requests at one instant share it.

    A run made up to ``until_s`` answers every start at or before ``until_s`` as a shorter
    run would (later ones are ``inf`` in the shorter), and every caller only asks whether a
    start is at or before its own ``until_s``: so a kept run serves any request whose
    ``until_s`` is not later, and a later one replaces it. At most ``size`` runs and
    ``max_bytes`` of arrays and keys are kept (a run grows with the queue: thousands of
    queued jobs make one of hundreds of KB): 64 runs made a trace answered at 100 instants
    in turn run every queue again (bench_wait_api, docs/results.md). Thread-safe (gunicorn
    threads).
    """

    def __init__(self, size: int = 1024, max_bytes: int = 32 * 2**20) -> None:
        self.runs: LRU[tuple[float, StartProfile]] = LRU(size=size, max_bytes=max_bytes)

    @staticmethod
    def key(state: QueueState) -> tuple:
        return (state.now_s, state.machine_procs, state.running_end_s.tobytes(),
                state.running_procs.tobytes(), state.queue_procs.tobytes(),
                state.queue_estimate_s.tobytes())  # fmt: skip

    def get(self, state: QueueState, until_s: float = float("inf")) -> StartProfile:
        """A run of ``state``'s queue answering every start up to ``until_s``."""
        key = self.key(state)
        held = self.runs.get(key)
        if held is not None and held[0] >= until_s:
            return held[1]
        run = profile(state, until_s)
        self.runs.put(key, (until_s, run), _nbytes(key, run))
        return run


def _nbytes(key: tuple, run: StartProfile) -> int:
    arrays = (run.now, run.free, run.horizon, run.extra, run.alone_now, run.alone_free,
              run.queue_start_s)  # fmt: skip
    return sum(len(k) for k in key if isinstance(k, bytes)) + sum(a.nbytes for a in arrays)


@dataclass(frozen=True)
class Plan:
    """Predicted starts (absolute seconds) of the queued jobs (Q,) and of the request."""

    queue_start_s: np.ndarray
    start_s: float


def plan(
    state: QueueState, procs: int, estimate_s: float, profiles: Profiles | None = None
) -> Plan:
    """Run EASY forward until every queued job and the request have started.

    ``profiles``: the queue's runs kept (:class:`Profiles`). The request, queued last, changes
    nothing before it starts (``pyss_adapter.core.start_profile``), and in the pass at its
    start every job ahead is looked at before it: so when it starts at or after every job
    ahead in the queue's own run, that run's starts are this plan's, and its start is the
    run's answer for it. Otherwise (it backfills ahead of some of them, which it may then
    delay) the queue is run again with it. Either way the same numbers
    (``tests/core/test_why.py`` compares them on random queues)."""
    procs = int(min(max(procs, 1), state.machine_procs))
    estimate_s = max(float(estimate_s), 1.0)
    if profiles is not None:
        run = profiles.get(state)
        start = run.start_s(procs, estimate_s)
        ahead = run.queue_start_s
        if np.isfinite(start) and (ahead.size == 0 or start >= ahead.max()):
            return Plan(queue_start_s=ahead.copy(), start_s=start)
    return _engine_plan(state, procs, estimate_s)


def _engine_plan(state: QueueState, procs: int, estimate_s: float) -> Plan:
    from pyss_adapter.core.easy import EasyScheduler
    from pyss_adapter.core.engine import Engine
    from pyss_adapter.core.jobs import SimJobs

    r = state.running_end_s.size
    est = np.concatenate([state.remaining_s(), state.queue_estimate_s, [estimate_s]])
    sizes = np.concatenate([state.running_procs, state.queue_procs, [procs]]).astype(np.int64)
    n = est.size
    jobs = SimJobs(
        job_id=np.arange(n), submit_s=np.full(n, state.now_s), runtime_s=est, estimate_s=est,
        n_procs=sizes, user_id=np.zeros(n, np.int64), machine_procs=state.machine_procs,
        mode="forward",
    )  # fmt: skip
    engine = Engine.from_state(jobs, EasyScheduler(), state.now_s, r)
    engine.run()
    starts = np.asarray(engine.start_s, dtype=float)
    return Plan(queue_start_s=starts[r:-1], start_s=float(starts[-1]))
