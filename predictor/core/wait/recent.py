"""A method's recent accuracy on a site, for answers that say how far to trust them.

An answer about a new request comes with (1) an interval at the caller's confidence
(:mod:`predictor.core.wait.intervals`) and ``P(start within T)``
(:mod:`predictor.core.wait.p_within`) and (2) the method's recent AAE and the mean wait of the
same recent jobs, so AAE / mean wait reads like the evaluation's column.
All come from re-predicting the jobs of the log that most recently *started* by the
request's ``known_at_s`` (their waits are known then), each at its own arrival, where a job's
error is usable once its wait is known. The interval is the evaluation's own online rule
(:meth:`RecentScorer.adaptive`: ``local_interval.local_now`` replayed over the last
``replayed`` such jobs: the run of the errors of the 200 of them predicted nearest the
request, added to its prediction, at a level their own intervals' misses correct; since stop
59, errors rather than waits since stop 60. Stop 57 replayed
the pooled errors of ``intervals.online_intervals``, which held overall but 0.44-0.69 for the
jobs told over 6 hours at 90%: docs/results.md "Stop 59"). ``P(start within T)`` reads the
200 predicted nearest of the last 2,000 that *arrived* by then, started or still waiting: their
Kaplan-Meier chance to start within T, a job still waiting counted as waiting at least as long
as it has so far (:mod:`predictor.core.wait.km_within`, since stop 61;
:meth:`RecentScorer.window`). Stop 58 read the share of the last 2,000 that started, which
overstated it: the jobs still waiting are the long waits. The recent AAE and the mean wait
read the ``n`` last.

The pool depends on the instant, not on the request: :class:`RecentScorer` builds it once per
instant (a small LRU) from a :class:`~predictor.core.wait.row_memo.RowWaitMemo`, so a new
instant only predicts the rows that started since the instants seen before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from predictor.core.lru import LRU
from predictor.core.wait.history import KnownHistory
from predictor.core.wait.intervals import interval_from_pool, scores
from predictor.core.wait.km_within import p_within_censored
from predictor.core.wait.local_interval import REPLAYED, LocalNow, local_now
from predictor.core.wait.p_within import NEIGHBOURS, WINDOW, p_within
from predictor.core.wait.row_memo import RowWaitMemo

DEFAULT_RECENT = 300
STATES_BYTES = 16 * 2**20  # interval states kept per scorer: about 500 instants x levels (32 kB)


@dataclass(frozen=True)
class Arrived:
    """The last rows that arrived by an instant, started or still waiting: their predictions,
    their wait (started) or the time waited so far (still waiting), and which started.
    ``P(start within T)`` reads them (:mod:`predictor.core.wait.km_within`)."""

    rows: np.ndarray
    pred_s: np.ndarray
    waited_s: np.ndarray
    started: np.ndarray


@dataclass(frozen=True)
class RecentErrors:
    """The recent jobs a method was re-scored on: rows, its predictions, the actual waits."""

    rows: np.ndarray
    pred_s: np.ndarray
    wait_s: np.ndarray

    @property
    def aae_s(self) -> float:
        return float(np.mean(np.abs(self.pred_s - self.wait_s))) if self.rows.size else np.nan

    @property
    def mean_wait_s(self) -> float:
        return float(np.mean(self.wait_s)) if self.rows.size else np.nan

    def scores(self, score: str = "diff") -> np.ndarray:
        return scores(self.pred_s, self.wait_s, score)

    def answer(
        self,
        pred_s: np.ndarray,
        level: float,
        within_s: float | None = None,
        adaptive: LocalNow | None = None,
        like: Arrived | None = None,
    ) -> dict[str, Any]:
        """Interval, ``P(start within T)`` and recent accuracy for predictions ``pred_s``; the
        interval from ``adaptive`` (:meth:`RecentScorer.adaptive`) when given, else split
        conformal over these jobs' errors; ``P`` from the jobs predicted most like each
        among ``like`` (:meth:`RecentScorer.window`, started or still waiting:
        :func:`predictor.core.wait.km_within.p_within_censored`), else among these jobs
        (all started: :func:`predictor.core.wait.p_within.p_within`).

        Raises ``ValueError`` when no recent job is known (nothing to calibrate from).
        """
        pool = self.scores()
        if adaptive is not None:
            low, high = adaptive.interval(pred_s)
        else:
            low, high = interval_from_pool(pred_s, pool, level)
        out: dict[str, Any] = {
            "level": level,
            "low_s": low,
            "high_s": high,
            "recent_jobs": int(self.rows.size),
            "recent_aae_s": self.aae_s,
            "recent_mean_wait_s": self.mean_wait_s,
        }
        if within_s is not None:
            out["within_s"] = float(within_s)
            if like is None or not like.rows.size:
                out["p_within"] = p_within(pred_s, self.pred_s, self.wait_s, within_s)
                read = self.rows.size
            else:
                out["p_within"] = p_within_censored(pred_s, like.pred_s, like.waited_s,
                                                    like.started, within_s)  # fmt: skip
                read = like.rows.size
            out["p_within_jobs"] = min(NEIGHBOURS, int(read))
        return out


def recent_rows(
    jobs: Any,
    known_at_s: float,
    n_before: int,
    n: int = DEFAULT_RECENT,
    known: KnownHistory | None = None,
) -> np.ndarray:
    """The ``n`` usable rows below ``n_before`` that most recently started by ``known_at_s``,
    in row (arrival) order. ``known``: the log's :class:`KnownHistory`, when already built."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    known = KnownHistory.from_jobs(jobs) if known is None else known
    k = int(known.prefix(np.array([float(known_at_s)]))[0])
    # Rows at or above n_before are skipped; look back far enough to still find n of them.
    lo = k - n
    while True:
        rows = known.order[max(lo, 0) : k]
        rows = rows[rows < n_before]
        if rows.size >= n or lo <= 0:
            return np.sort(rows[-n:])
        lo -= 4 * n


def recent_errors(method: Any, rows: np.ndarray, wait_s: np.ndarray) -> RecentErrors:
    """Re-predict ``rows`` of a fitted method's log at their own arrivals."""
    rows = np.asarray(rows, dtype=np.int64)
    pred = method.predict_rows(rows).wait_s if rows.size else np.zeros(0)
    return RecentErrors(rows=rows, pred_s=np.asarray(pred, dtype=float), wait_s=wait_s[rows])


class RecentScorer:
    """A fitted method's recent errors per instant, for one log (one per fitted bundle).

    ``at(known_at_s, n_before)`` equals ``recent_errors(method, recent_rows(jobs, ...), wait)``;
    the log's start order is sorted once, row predictions are memoised
    (:class:`RowWaitMemo`) and the last ``size`` instants are kept.
    """

    def __init__(
        self, method: Any, jobs: Any, n: int = DEFAULT_RECENT, size: int = 256,
        replayed: int = REPLAYED,
    ) -> None:  # fmt: skip
        self.jobs, self.n, self.replayed = jobs, n, max(int(replayed), n)
        self.known = KnownHistory.from_jobs(jobs)
        self.usable = np.sort(self.known.order)  # usable rows in arrival order
        self.submit_s = jobs["submit_time"].to_numpy(float)
        self.wait = jobs["wait_time"].to_numpy(float)
        self.memo = RowWaitMemo(method, len(jobs))
        self.cache: LRU[RecentErrors] = LRU(size=size)
        self.windows: LRU[Arrived] = LRU(size=size)  # their own: pools are not evicted
        # a state costs a replay (tens of ms) to make again, so more are kept than pools
        self.states: LRU[tuple[LocalNow | None]] = LRU(max_bytes=STATES_BYTES)

    def arrived(self, known_at_s: float) -> int:
        """Rows submitted by ``known_at_s`` (every such job has arrived)."""
        return int(np.searchsorted(self.submit_s, known_at_s, side="right"))

    def missing(self, known_at_s: float, n_before: int | None = None) -> bool:
        """Whether ``at`` would predict rows (a new instant whose pool holds unknown rows)."""
        n_before = self.arrived(known_at_s) if n_before is None else int(n_before)
        if (float(known_at_s), n_before) in self.cache:
            return False
        return not bool(self.memo.known[self._needed(known_at_s, n_before)].all())

    def at(self, known_at_s: float, n_before: int | None = None) -> RecentErrors:
        n_before = self.arrived(known_at_s) if n_before is None else int(n_before)
        key = (float(known_at_s), n_before)
        found = self.cache.get(key)
        if found is not None:
            return found
        # every row the adaptive level replays (:meth:`adaptive`) and P(start within T)
        # reads (:meth:`window`) predicted in one call
        self.memo.wait_s(self._needed(known_at_s, n_before))
        return self.cache.put(key, self._errors(known_at_s, n_before, self.n))

    def _needed(self, known_at_s: float, n_before: int) -> np.ndarray:
        """The rows an instant reads: the replayed started ones and the arrived window."""
        started = recent_rows(self.jobs, known_at_s, n_before, self.replayed, self.known)
        return np.union1d(started, self._arrived_rows(known_at_s, n_before))

    def _arrived_rows(self, known_at_s: float, n_before: int) -> np.ndarray:
        """The last ``p_within.WINDOW`` usable rows below ``n_before`` submitted by
        ``known_at_s``, in arrival order."""
        below = min(int(n_before), self.arrived(known_at_s))
        rows = self.usable[: int(np.searchsorted(self.usable, below))]
        return rows[-min(WINDOW, self.replayed) :]

    def window(self, known_at_s: float, n_before: int | None = None) -> Arrived:
        """The last ``p_within.WINDOW`` rows that arrived by ``known_at_s``, started or still
        waiting: ``P(start within T)`` reads them (since stop 61; the last that *started*
        before, which overstated it: docs/results.md "Stop 61")."""
        n_before = self.arrived(known_at_s) if n_before is None else int(n_before)
        key = (float(known_at_s), n_before)
        found = self.windows.get(key)
        if found is not None:
            return found
        rows = self._arrived_rows(known_at_s, n_before)
        submit, wait = self.submit_s[rows], self.wait[rows]
        started = submit + wait <= float(known_at_s)
        waited = np.where(started, wait, float(known_at_s) - submit)
        return self.windows.put(key, Arrived(rows, self.memo.wait_s(rows), waited, started))

    def _errors(self, known_at_s: float, n_before: int, n: int) -> RecentErrors:
        rows = recent_rows(self.jobs, known_at_s, n_before, n, self.known)
        return RecentErrors(rows=rows, pred_s=self.memo.wait_s(rows), wait_s=self.wait[rows])

    def adaptive(
        self, known_at_s: float, level: float, n_before: int | None = None
    ) -> LocalNow | None:
        """The online rule's state at ``known_at_s`` (``local_interval.local_now``): replayed
        over the last ``replayed`` rows that started by then, each at its own arrival (None
        while fewer than ``local_interval.MIN_POOL`` did). Kept per instant and level."""
        n_before = self.arrived(known_at_s) if n_before is None else int(n_before)
        key = (float(known_at_s), n_before, float(level))
        found = self.states.get(key)
        if found is not None:
            return found[0]
        rows = recent_rows(self.jobs, known_at_s, n_before, self.replayed, self.known)
        wait, arrival = self.wait[rows], self.submit_s[rows]
        state = local_now(self.memo.wait_s(rows), wait, arrival, arrival + wait,
                          float(known_at_s), level)  # fmt: skip
        size = 64 + (state.pred_s.nbytes + state.wait_s.nbytes if state is not None else 0)
        return self.states.put(key, (state,), size)[0]
