"""``auto``: the wait method with the lowest recent error on this site, chosen online.

Which method predicts waits best changes from site to site (APQ, IBL and GBM each win one of
the shared traces; on HPC2N answering 0 beats APQ). Seed 002 ("End-to-End Predictions-Based
Resource Management Framework for Supercomputer Jobs", section on queue-wait prediction)
proposes one method; a site cannot tell in advance which one suits it, so ``auto`` measures.

Rule, for a target arriving at ``t``:

1. **Start**: before ``min_known`` of the candidates' errors are known, answer with the
   candidate that had the lowest AAE on the tuning part (each candidate fitted on the first
   half of the tuning part, scored on up to ``n_validation`` jobs of the second half, then
   refitted on the whole tuning part). Those validation errors also seed the pool below.
2. **Online**: at the tuning end and every ``every`` rows after it (fixed row blocks, as the
   retrained models use), each candidate is re-scored on the ``n_recent`` jobs that had most
   recently *started* (their waits are known: the leakage rule of
   ``predictor.core.wait.history``); the block answers with the candidate of lowest mean
   absolute error over the last ``window`` scored jobs (validation jobs included). A
   target's choice depends on its block only, not on which other targets are asked for.
3. **Outside the seen states**: when the target's state lies beyond anything in the tuning
   part (its user's waiting jobs, or the queue's waiting jobs, exceed ``outside_factor`` x
   the largest value seen there: the HPC2N user who queued 2,414 jobs when the tuning part
   never saw more than 183), nearest neighbours and trees extrapolate from the wrong jobs;
   ``auto`` answers with the ``safe`` candidate instead.

Because ``zero`` is a candidate, whenever answering 0 has been best recently it is chosen;
``auto`` can still lose to a single method by switching late after a change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from predictor.core.state.retrain import boundaries
from predictor.core.wait.base import Progress, WaitEstimator
from predictor.core.wait.history import KnownHistory, usable_mask
from predictor.core.wait.intervals import known_order
from predictor.core.wait.targets import WaitTargets
from predictor.core.wait.types import WaitContext, WaitPrediction


@dataclass
class OnlineChoice:
    """Which candidate answers each target, and the recent AAE behind the choice.

    chosen : (n,) index into the candidate list.
    recent_aae_s : (n,) recent AAE of the chosen candidate (NaN before anything is known).
    recent_mean_wait_s : (n,) mean actual wait of the same recent jobs (NaN likewise).
    reason : (n,) "initial", "recent" or "outside".
    """

    chosen: np.ndarray
    recent_aae_s: np.ndarray
    recent_mean_wait_s: np.ndarray
    reason: np.ndarray


def online_choice(
    pred_s: np.ndarray,
    wait_s: np.ndarray,
    arrival_s: np.ndarray,
    known_s: np.ndarray,
    *,
    initial: int,
    window: int = 1000,
    min_known: int = 50,
    outside: np.ndarray | None = None,
    safe: int | None = None,
) -> OnlineChoice:
    """Choose a candidate per row (module docstring, steps 1-3).

    Parameters
    ----------
    pred_s : (m, n) predictions of the m candidates for n rows in arrival order, seconds.
    wait_s : (n,) actual waits; row j's is read only for rows after it became known.
    arrival_s, known_s : (n,) submit time and start time of each row.
    initial : candidate used before ``min_known`` rows are known.
    outside : (n,) bool, rows whose state lies outside the seen ones; they get ``safe``.
    """
    pred = np.atleast_2d(np.asarray(pred_s, dtype=float))
    y = np.asarray(wait_s, dtype=float)
    m, n = pred.shape
    if window < 1 or min_known < 1:
        raise ValueError(f"window and min_known must be >= 1, got {window}, {min_known}")
    order, count = known_order(arrival_s, known_s)
    err = np.abs(pred[:, order] - y[order])  # (m, n) in known order
    cum = np.concatenate([np.zeros((m, 1)), np.cumsum(err, axis=1)], axis=1)
    cum_y = np.concatenate([[0.0], np.cumsum(y[order])])
    lo = np.maximum(count - window, 0)
    size = count - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        recent = (cum[:, count] - cum[:, lo]) / size  # (m, n)
        mean_wait = (cum_y[count] - cum_y[lo]) / size
    ready = size >= min_known
    chosen = np.where(ready, np.argmin(np.where(ready, recent, 0.0), axis=0), initial)
    reason = np.where(ready, "recent", "initial").astype(object)
    if outside is not None and safe is not None:
        out = np.asarray(outside, dtype=bool)
        chosen = np.where(out, safe, chosen)
        reason[out] = "outside"
    aae = np.where(size > 0, recent[chosen, np.arange(n)], np.nan)
    return OnlineChoice(
        chosen=chosen.astype(np.int64),
        recent_aae_s=aae,
        recent_mean_wait_s=np.where(size > 0, mean_wait, np.nan),
        reason=reason,
    )


def outside_seen(features: np.ndarray, seen_max: np.ndarray, factor: float = 1.0) -> np.ndarray:
    """Rows with any feature above ``factor`` x its largest value in the seen (tuning) part.

    features : (n, k) the target's state values (e.g. user waiting jobs, queue waiting jobs).
    seen_max : (k,) their maxima over the tuning part.
    """
    feats = np.atleast_2d(np.asarray(features, dtype=float))
    bound = factor * np.asarray(seen_max, dtype=float)
    return np.any(feats > bound[None, :], axis=1)


def pick_initial(pred_s: np.ndarray, wait_s: np.ndarray, names: Sequence[str]) -> int:
    """Index of the candidate with the lowest AAE on validation rows (ties: first listed)."""
    pred = np.atleast_2d(np.asarray(pred_s, dtype=float))
    if pred.shape[0] != len(names):
        raise ValueError(f"{pred.shape[0]} prediction rows for {len(names)} candidates")
    if pred.shape[1] == 0:
        return 0
    return int(np.argmin(np.mean(np.abs(pred - np.asarray(wait_s, dtype=float)), axis=1)))


CANDIDATES = ("apq", "ibl", "gbm", "qbets", "median", "zero")
OUTSIDE_FEATURE = "user_wait_count"  # with the queue's waiting-job count (``wait_count``)


class AutoWait(WaitEstimator):
    """The registered ``auto`` method: candidates fitted and chosen as the module says.

    Parameters
    ----------
    candidates : registry names of the methods to choose from (``zero`` should stay in).
    safe : the candidate that answers outside the seen states (measured on the tuning parts:
        the gradient-boosted model had the lowest AAE on such targets, docs/results.md).
    window, min_known : :func:`online_choice`.
    n_validation : tuning-part jobs scored for the initial choice.
    every, n_recent : the choice is remade at the tuning end and every ``every`` rows after it
        (``predictor.core.state.retrain`` blocks), each time after re-scoring every candidate
        on the ``n_recent`` jobs that had most recently started; a target's choice depends on
        its block only, so log rows, snapshots and chunks get the same answer. The default
        ``n_recent = every`` scores about every job that started since the block before
        (dev runs, docs/results.md: 200 was 2-8 points worse on KTH and CTC, equal on SDSC).
    outside_factor : :func:`outside_seen`'s factor.
    random_state : passed to every candidate.
    make : ``make(name, random_state)`` builds a candidate (the registry passes its
        ``make_method``; injected so that this module does not import the registry).
    """

    name = "auto"

    def __init__(
        self,
        candidates: Sequence[str] = CANDIDATES,
        safe: str = "gbm",
        window: int = 3000,
        min_known: int = 50,
        n_validation: int = 1000,
        n_recent: int = 2000,
        every: int = 2000,
        outside_factor: float = 1.0,
        random_state: int | None = 0,
        make: Callable[[str, int | None], Any] | None = None,
    ) -> None:
        self.make = make
        self.every = every
        self.candidates = candidates
        self.safe = safe
        self.window = window
        self.min_known = min_known
        self.n_validation = n_validation
        self.n_recent = n_recent
        self.outside_factor = outside_factor
        self.random_state = random_state

    def _learn(self, history: WaitContext) -> None:
        if self.make is None:
            raise ValueError("auto needs make=registry.make_method to build its candidates")
        make_method = self.make
        names = list(self.candidates)
        if self.safe not in names:
            raise ValueError(f"safe method {self.safe!r} is not among candidates {names}")
        half = history.n_tune // 2
        vctx = WaitContext(history.jobs, history.state, half, history.machine_procs)
        mask, _ = usable_mask(history.jobs.iloc[: history.n_tune])
        rows = np.flatnonzero(mask[half:]) + half
        if rows.size > self.n_validation:
            pick = np.linspace(0, rows.size - 1, self.n_validation).round().astype(np.int64)
            rows = rows[np.unique(pick)]
        rows = rows.astype(np.int64)
        val = np.zeros((len(names), rows.size))
        self.methods_ = {}
        for k, name in enumerate(names):
            if rows.size:
                val[k] = make_method(name, self.random_state).fit(vctx).predict_rows(rows).wait_s
            self.methods_[name] = make_method(name, self.random_state).fit(history)
        self.validation_rows_ = rows
        self.validation_pred_ = val
        self.initial_ = pick_initial(val, _column(history, "wait_time")[rows], names)
        seen = np.arange(history.n_tune)
        user = np.asarray(history.state.summary, dtype=float)[seen, self._user_col(history)]
        queue = np.asarray(history.state.wait_count, dtype=float)[seen]
        self.seen_max_ = np.array([user.max(initial=0.0), queue.max(initial=0.0)])
        self.known_ = KnownHistory.from_jobs(history.jobs)
        self._blocks: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    @staticmethod
    def _user_col(history: WaitContext) -> int:
        return list(history.state.summary_names).index(OUTSIDE_FEATURE)

    def _block_errors(self, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidates' predictions, waits and start times of the ``n_recent`` jobs that most
        recently started by row ``b``'s arrival (re-scored once per block, then cached)."""
        if b not in self._blocks:
            history = self._fitted()
            submit, wait = _column(history, "submit_time"), _column(history, "wait_time")
            k = int(self.known_.prefix(submit[[b]], np.array([b]))[0]) if b < submit.size else 0
            rows = np.sort(self.known_.order[max(k - self.n_recent, 0) : k])
            rows = rows[rows >= history.n_tune]  # the tuning part is scored by validation
            pred = np.zeros((len(self.methods_), rows.size))
            if rows.size:
                pred = np.stack([m.predict_rows(rows).wait_s for m in self.methods_.values()])
            self._blocks[b] = (pred, wait[rows], submit[rows] + wait[rows])
        return self._blocks[b]

    def _choice_at(self, b: int) -> tuple[int, float, float]:
        """Candidate with the lowest AAE over the last ``window`` scored jobs known at row
        ``b`` (validation jobs and the recent jobs of every block up to ``b``), its AAE and
        the mean wait of those jobs; the initial candidate while fewer than ``min_known``."""
        history = self._fitted()
        submit, wait = _column(history, "submit_time"), _column(history, "wait_time")
        v = self.validation_rows_
        parts = [(self.validation_pred_, wait[v], submit[v] + wait[v])]
        parts += [self._block_errors(int(c)) for c in self._block_starts(b)]
        pred = np.concatenate([p for p, _, _ in parts], axis=1)
        y = np.concatenate([w for _, w, _ in parts])
        start = np.concatenate([t for _, _, t in parts])
        t_b = submit[b] if b < submit.size else np.inf
        known = np.flatnonzero(start <= t_b)
        known = known[np.argsort(start[known], kind="stable")][-self.window :]
        if known.size < self.min_known:
            err = np.abs(pred[self.initial_, known] - y[known])
            return self.initial_, float(np.mean(err)) if known.size else np.nan, np.nan
        aae = np.abs(pred[:, known] - y[known]).mean(axis=1)
        best = int(np.argmin(aae))
        return best, float(aae[best]), float(y[known].mean())

    def _block_starts(self, b: int) -> np.ndarray:
        n_tune = self._fitted().n_tune
        return np.arange(n_tune, b + 1, self.every) if b >= n_tune else np.zeros(0, np.int64)

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        """Choose per target first, then ask each candidate only for the targets it answers
        (a candidate's answer for a target does not depend on the other targets asked)."""
        history = self._fitted()
        names = list(self.methods_)
        submit = _column(history, "submit_time")
        blocks = boundaries(
            targets.n_before, targets.known_at_s, submit, history.n_tune, self.every
        )
        chosen = np.zeros(len(targets), dtype=np.int64)
        aae = np.full(len(targets), np.nan)
        mean_wait = np.full(len(targets), np.nan)
        for b in np.unique(blocks):
            sel = blocks == b
            chosen[sel], aae[sel], mean_wait[sel] = self._choice_at(int(b))
        reason = np.where(np.isnan(mean_wait), "initial", "recent").astype(object)
        col = self._user_col(history)
        feats = np.c_[targets.summary[:, col], targets.wait_count]
        outside = outside_seen(feats, self.seen_max_, self.outside_factor)
        chosen[outside] = names.index(self.safe)
        reason[outside] = "outside"
        return WaitPrediction(
            wait_s=self._chosen_waits(targets, chosen, progress),
            predictor=np.array(names, dtype=object)[chosen],
            extra={"recent_aae_s": aae, "recent_mean_wait_s": mean_wait, "reason": reason},
        )

    def _chosen_waits(
        self, targets: WaitTargets, chosen: np.ndarray, progress: Progress
    ) -> np.ndarray:
        """(n,) each target's wait from its chosen candidate only."""
        names = list(self.methods_)
        out = np.zeros(len(targets))
        for k, name in enumerate(names):
            sel = np.flatnonzero(chosen == k)
            part = None if progress is None else _part(progress, k, len(names))
            if sel.size == 0:
                continue
            method = self.methods_[name]
            if targets.rows is not None:
                out[sel] = method.predict_rows(targets.rows[sel], progress=part).wait_s
            else:  # the requests' state is computed once, for the choice and the candidate
                out[sel] = method._predict(targets.take(sel), part).wait_s
        if progress is not None:
            progress(1.0)
        return out


def _column(history: WaitContext, name: str) -> np.ndarray:
    return history.jobs[name].to_numpy(dtype=float)


def _part(progress: Any, k: int, m: int) -> Any:
    return lambda f: progress((k + max(0.0, min(1.0, f))) / m)
