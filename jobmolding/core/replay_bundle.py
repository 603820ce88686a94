"""The predictor a replay decides with: the live service's bundle (``predictor.core.bundle``:
``fit_bundle`` and ``predict_requests``), fitted on the simulated past only and refitted in
blocks as the replay advances.

At the first decision the bundle is fitted on the jobs that have finished *in the
simulation* by then (their simulated waits and runtimes, from ``snapshot_from_engine``);
it is fitted again whenever that history has grown by ``refit_growth`` (25%: a handful of
fits over a whole log). Between fits it answers on each decision's snapshot exactly as a
site's bundle does between its refits: through ``live_bundle.LiveBundle`` (the headline wait of
the history estimate and the queue-based start, by the rule a site keeps at each fit:
``headline_scores.choose_on_history`` on the last ``rule_jobs`` finished jobs), on the
snapshot's queue and running jobs and the fitted history. Nothing from the log's own schedule
is read.

The rule is chosen on what the replayed site told its jobs, as a live site's is: the answer
given on a decision's own snapshot for the size submitted is kept (:meth:`ReplayBundle.keep`,
``told.ToldBook``) and scored once the job has ended; a job the replay held, or one submitted
before the first decision, is answered again from the state at its arrival
(``headline_scores.pooled_answers``).

With a ``memo`` (``fit_memo.FitMemo``, one per evaluation) a fit on a history equal to one
another replay of the same evaluation has fitted first takes that replay's bundle: the
tuning part's replays all fit the same history at their first decision.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from jobmolding.core.fit_memo import FitMemo
from jobmolding.core.headline import DEFAULT, RuleChoice
from jobmolding.core.headline_scores import choose_on_history, last_rows_in
from jobmolding.core.live_bundle import LiveBundle
from jobmolding.core.told import Told, ToldBook, ToldRows
from predictor.core.bundle import FittedBundle, fit_bundle
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import Snapshot

MIN_HISTORY = 50  # as a live site (holdqueue.services.predict.MIN_HISTORY)
RULE_JOBS = 200  # as a live site (holdqueue.services.predict.CALIBRATION_JOBS)


class ReplayBundle:
    """``fit_bundle(wait_method, runtime_method)`` on the simulated past, refitted in blocks.

    Parameters
    ----------
    machine_procs : processors.
    wait_method, runtime_method : registry names (``predictor.core.wait.registry``,
        ``predictor.core.runtime.registry``), as a site's bundle names them.
    refit_growth : refit when the finished history has grown by this share.
    memo : fits shared with the evaluation's other replays (module docstring), or None.
    rule_jobs : the finished jobs the headline rule is chosen on at each fit (0: the
        default rule, ``headline.DEFAULT``, without scoring).
    """

    def __init__(
        self,
        machine_procs: int,
        wait_method: str = "sim",
        runtime_method: str = "rangeset",
        refit_growth: float = 0.25,
        random_state: int = 0,
        memo: FitMemo | None = None,
        rule_jobs: int = RULE_JOBS,
    ) -> None:
        self.machine_procs = int(machine_procs)
        self.wait_method = wait_method
        self.runtime_method = runtime_method
        self.refit_growth = refit_growth
        self.random_state = random_state
        self.memo = memo
        self.rule_jobs = rule_jobs
        self.bundle_: FittedBundle | None = None
        self.fitted_rows_ = 0
        self.fitted_keys_ = np.zeros(0, dtype=np.int64)  # the log's job ids of the fitted rows
        self.fits_ = 0
        self.fit_s_ = 0.0
        self.wait_rules_: list[str] = []  # ``auto``'s weight rule kept at each fit
        self.headline_rules_: list[str] = []  # the headline rule kept at each fit
        self.told_jobs_: list[int] = []  # how many scored jobs were as told, at each fit
        self.book_ = ToldBook()  # what was told each job submitted at its decision
        self._told: dict[tuple[float, int], Told] = {}  # this decision's answers

    def refresh(self, snapshot: Snapshot) -> None:
        """Before a decision: forget the last decision's answers; fit on ``snapshot``'s
        finished history when there is none or it has grown."""
        self._told = {}
        hist = snapshot.history
        done = (hist["wait_time"].to_numpy() >= 0) & (hist["run_time"].to_numpy() >= 0)
        rows = int(done.sum())
        if self.bundle_ is not None and rows < self.fitted_rows_ * (1.0 + self.refit_growth):
            return
        if rows < MIN_HISTORY and self.bundle_ is not None:
            return
        frame = finished_history(hist, done)
        keys = hist["job_id"].to_numpy()[done]
        told = self.book_.rows(keys[last_rows_in(frame, self.rule_jobs)])

        def fit() -> tuple[FittedBundle, RuleChoice]:
            bundle = fit_bundle(
                frame,
                self.machine_procs,
                wait_method=self.wait_method,
                bound_method=None,
                runtime_method=self.runtime_method,
                random_state=self.random_state,
            )
            if self.rule_jobs <= 0 or not bundle.has_waits:
                return bundle, RuleChoice()
            return bundle, choose_on_history(bundle, self.rule_jobs, self._told_of(keys))[0]

        # a fit is shared only with a replay that told the scored jobs the same answers
        settings = (self.machine_procs, self.wait_method, self.runtime_method,
                    self.random_state, self.rule_jobs, told.key())  # fmt: skip
        shared = self.memo.hits if self.memo is not None else 0
        first = self.fits_ == 0  # only first fits recur (fit_memo)
        found = fit() if self.memo is None else self.memo.get(settings, frame, fit, first)
        self.bundle_, choice = found
        self.headline_rules_.append(choice.rule)
        self.told_jobs_.append(choice.told)
        self.fitted_rows_, self.fits_ = rows, self.fits_ + 1
        self.fitted_keys_ = keys
        chosen = getattr(self.bundle_.wait, "chosen_rule", None)
        if chosen is not None:
            self.wait_rules_.append(chosen())
        if self.memo is None or self.memo.hits == shared:  # a shared fit cost nothing here
            self.fit_s_ += self.bundle_.fit_s

    def _told_of(self, keys: np.ndarray) -> Callable[[np.ndarray], ToldRows]:
        """``told(rows)`` of a fitted history whose rows are the log's jobs ``keys``."""
        return lambda rows: self.book_.rows(keys[rows])

    @property
    def rule_(self) -> str:
        """The headline rule kept at the last fit (``headline.DEFAULT`` before any)."""
        return self.headline_rules_[-1] if self.headline_rules_ else DEFAULT

    def predict(
        self,
        snapshot: Snapshot,
        requests: RequestBatch,
        runtimes: list[RangeSet] | None = None,
    ) -> tuple[np.ndarray, list[RangeSet]]:
        """As a live site answers (``LiveBundle``): the headline wait by the rule kept at the
        last fit."""
        live = LiveBundle(self._fitted(), self.rule_, told=self._told)
        return live.predict(snapshot, requests, runtimes)

    def keep(self, job_key: int, at_s: float, procs: int) -> None:
        """Keep what was told job ``job_key`` (the log's job id) answered at ``at_s`` for
        ``procs`` processors on this decision's snapshot: it was submitted so."""
        told = self._told.get((float(at_s), int(procs)))
        if told is not None:
            self.book_.keep(int(job_key), told)

    def runtimes(self, snapshot: Snapshot, requests: RequestBatch) -> list[RangeSet]:
        return LiveBundle(self._fitted()).runtimes(snapshot, requests)

    def running_ends(self, snapshot: Snapshot) -> np.ndarray:
        return LiveBundle(self._fitted()).running_ends(snapshot)

    def _fitted(self) -> FittedBundle:
        if self.bundle_ is None:
            raise RuntimeError("ReplayBundle.refresh(snapshot) must run before predict")
        return self.bundle_


def finished_history(hist: pd.DataFrame, done: np.ndarray) -> pd.DataFrame:
    """The finished rows, renumbered as a site's history is (``job_id`` 1..n)."""
    frame = hist.loc[done].reset_index(drop=True).copy()
    frame["job_id"] = np.arange(1, len(frame) + 1)
    return frame
