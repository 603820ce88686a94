"""The smallest single change that starts a request sooner, by EASY forward (``forward``).

Each change is tried as a tentative arrival in the same queue, one at a time:

- fewer processors: the largest size below the request's whose predicted start is sooner by
  at least ``min_saving_s(wait) = max(60 s, 10 % of the wait)``. Sizes tried: the halvings
  of the request, the processors free now, and the processors free after each of the next
  running jobs ends (the sizes at which the free-processor profile changes). The time limit
  is kept: a job on fewer processors may need longer, which the user knows and we do not;
- a shorter time limit that fits a backfill hole: the longest limit ``L`` below the
  request's with which it starts now (EASY backfills a job that fits the free processors
  and ends before the head's reservation). Found by bisection on ``L`` in whole seconds,
  then floored to whole minutes above two minutes, so the quoted limit still fits;
- a later submission: with no further arrivals the request starts at the same predicted
  time whenever it is submitted before that start (the jobs ahead never see it), so it can
  be submitted up to ``wait`` later and wait that much less. It never starts it sooner, so
  it is reported apart from ``best``.

``best`` is the change with the larger saving (fewer processors or shorter limit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from predictor.core.why.explain import Why
from predictor.core.why.forward import Profiles, profile
from predictor.core.why.queue import QueueState

if TYPE_CHECKING:
    from pyss_adapter.core.start_profile import StartProfile

MIN_SAVING_S = 60.0
MIN_SAVING_SHARE = 0.10
MAX_SIZES = 40


@dataclass(frozen=True)
class Change:
    """One change and its effect (absolute seconds).

    kind : ``fewer_procs``, ``shorter_limit`` or ``later_submission``.
    procs, limit_s : the request after the change; delay_s : how much later it is submitted.
    start_s : its predicted start; saved_s : how much sooner than unchanged.
    """

    kind: str
    procs: int
    limit_s: float
    delay_s: float
    start_s: float
    saved_s: float


@dataclass(frozen=True)
class Sooner:
    fewer_procs: Change | None
    shorter_limit: Change | None
    later_submission: Change | None

    @property
    def best(self) -> Change | None:
        found = [c for c in (self.shorter_limit, self.fewer_procs) if c is not None]
        return max(found, key=lambda c: c.saved_s) if found else None


def min_saving_s(wait_s: float) -> float:
    """The least saving worth a change: ``max(60 s, 10 % of the wait)``."""
    return max(MIN_SAVING_S, MIN_SAVING_SHARE * wait_s)


def free_steps(why: Why) -> tuple[np.ndarray, np.ndarray]:
    """Times (absolute seconds) before the request's start at which the forward plan's free
    processors change, and the processors free from each (the request not counted)."""
    a = why.ahead
    times = np.unique(np.concatenate([[why.now_s], a.running_end_s, a.queued_start_s,
                                      a.queued_end_s]))  # fmt: skip
    times = times[(times >= why.now_s) & (times < why.start_s)]
    # A queued job holds its processors for start <= t < end: the ones ending after t less
    # the ones starting after t (an end before its start holds nothing, as before).
    q_end = np.maximum(a.queued_end_s, a.queued_start_s)
    used = (
        held_after(a.running_end_s, a.running_procs, times)
        + held_after(q_end, a.queued_procs, times)
        - held_after(a.queued_start_s, a.queued_procs, times)
    )
    return times, (why.free_procs + a.running_procs.sum()) - used


def held_after(edge_s: np.ndarray, procs: np.ndarray, times: np.ndarray) -> np.ndarray:
    """``sum(procs[edge_s > t])`` for each ``t`` of ``times``, by one sort and a bisection
    per time instead of a (times x jobs) mask (whole processor counts: every sum is exact,
    so the same numbers in any order)."""
    order = np.argsort(edge_s, kind="stable")
    after = np.concatenate([np.cumsum(procs[order][::-1])[::-1], np.zeros(1, procs.dtype)])
    return after[np.searchsorted(edge_s[order], times, side="right")]


def size_candidates(why: Why) -> list[int]:
    """Sizes below the request's to try, largest first (see the module docstring)."""
    procs = why.procs
    halvings = {procs >> k for k in range(1, int(procs).bit_length())}
    _, free = free_steps(why)
    sizes = sorted({s for s in halvings | {int(f) for f in free} if 1 <= s < procs}, reverse=True)
    return sizes[:MAX_SIZES]


def _run(state: QueueState, until_s: float, profiles: Profiles | None) -> StartProfile:
    """The queue's forward run up to ``until_s``, kept in ``profiles`` when given."""
    return profiles.get(state, until_s) if profiles else profile(state, until_s)


def fewer_procs(
    state: QueueState, why: Why, estimate_s: float, profiles: Profiles | None = None
) -> Change | None:
    """The largest smaller size that starts at least ``min_saving_s`` sooner (each size's
    start read off one forward run of the queue, :func:`forward.profile`)."""
    start_s = why.start_s
    need = min_saving_s(start_s - state.now_s)
    sizes = size_candidates(why)
    if not sizes:
        return None
    starts = _run(state, start_s - need, profiles)
    for size in sizes:
        start = starts.start_s(size, max(float(estimate_s), 1.0))  # as start_of takes it
        if start_s - start >= need:
            return Change("fewer_procs", size, estimate_s, 0.0, start, start_s - start)
    return None


def shorter_limit(
    state: QueueState,
    procs: int,
    estimate_s: float,
    start_s: float,
    profiles: Profiles | None = None,
) -> Change | None:
    """The longest limit below ``estimate_s`` that starts the request now (else None)."""
    now = state.now_s
    if start_s <= now:
        return None
    starts = _run(state, now, profiles)  # only "starts now" is asked
    if starts.start_s(procs, 1.0) > now:
        return None
    low, high = 1, int(np.ceil(estimate_s))  # starts now at low, not at high
    while high - low > 1:
        mid = (low + high) // 2
        if starts.start_s(procs, float(mid)) <= now:
            low = mid
        else:
            high = mid
    limit = float(low // 60 * 60 if low >= 120 else low)
    return Change("shorter_limit", procs, limit, 0.0, now, start_s - now)


def later_submission(
    state: QueueState, procs: int, estimate_s: float, start_s: float
) -> Change | None:
    """Submitting up to the predicted start later keeps that start (never sooner)."""
    delay = start_s - state.now_s
    if delay <= 0:
        return None
    return Change("later_submission", procs, estimate_s, delay, start_s, 0.0)


def sooner(
    state: QueueState, why: Why, estimate_s: float, profiles: Profiles | None = None
) -> Sooner:
    """Every single change of the module docstring for the request ``why`` explains
    (:func:`predictor.core.why.explain.explain` on the same state and estimate).
    ``profiles``: forward runs kept per queue (:class:`~predictor.core.why.forward.Profiles`),
    shared by the requests of one instant; the same answers as without."""
    procs, start_s = why.procs, why.start_s
    if start_s <= state.now_s:
        return Sooner(None, None, None)
    return Sooner(
        fewer_procs(state, why, estimate_s, profiles),
        shorter_limit(state, procs, estimate_s, start_s, profiles),
        later_submission(state, procs, estimate_s, start_s),
    )
