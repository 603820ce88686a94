"""``auto``: the wait methods weighted online by their errors on this site's started jobs.

Which method predicts waits best changes from site to site (APQ, IBL and GBM each win one of
the shared traces; on HPC2N answering 0 beats APQ). Seed 002 ("End-to-End Predictions-Based
Resource Management Framework for Supercomputer Jobs", section on queue-wait prediction)
proposes one method; a site cannot tell in advance which one suits it, so ``auto`` measures,
with always-zero among the experts.

1. **Experts.** Every candidate is fitted on the whole tuning part. A second copy of each,
   fitted on the first half of the tuning part, predicts up to ``n_validation`` jobs of the
   second half: those errors open the record, so the first test jobs are not answered blind.
2. **Pool.** After the tuning part, every ``stride``-th usable row (``stride`` keeps at most
   ``max_scored`` rows; fixed at ``fit``) is predicted by every expert at its own arrival.
   Its error becomes known when the job starts.
3. **Rule** (:mod:`predictor.core.wait.selection`), chosen per site at ``fit`` by default
   (``rule="choose"``: the one of ``rule_among`` with the lowest AAE on the validation jobs
   of step 1, each answered at its own arrival from the validation jobs started before it;
   the first at a tie): AdaHedge weights (or FlipFlop, or
   Fixed-Share, which tracks a best method that changes, or ML-Poly, or AdaHedge or ML-Poly on
   linearised losses, which find a mix better than every expert, or AdaHedge over the experts
   and that mix) over rounds of
   ``round_size`` started pool jobs; the answer is the weighted mean. A target whose state
   lies beyond the tuning part's (its user's waiting jobs, or the queue's, above the largest
   seen there: the HPC2N user who queued 2,414 jobs when the tuning part never saw more than
   183) gets the fallback measured on such jobs (the mix or any one expert, ``fallback_among``);
   a guard answers 0 whenever the rule has lost to always-zero over the last ``guard_window``
   known pool jobs (or, with ``meta``, (A,B)-Prod keeps the answers within a constant of
   zero's over the whole record instead).

Every answer names what ran (``predictor``: "mix", "fallback:<option>" or "guard:zero") and
carries the experts' weights and predictions and the rule's share of the answer in ``extra``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from predictor.core.wait.base import Progress, WaitEstimator
from predictor.core.wait.history import usable_mask
from predictor.core.wait.selection import HedgeSelector, Pool, expert_index
from predictor.core.wait.targets import WaitTargets
from predictor.core.wait.types import WaitContext, WaitPrediction

CANDIDATES = ("apq", "ibl", "gbm", "qbets", "median", "zero")
#: ``rule="choose"``'s candidates: the rule every site used until stop 48 (first: it wins a
#: tie) and the eleventh pass's dev choice (docs/results.md, "Twelfth pass")
RULE_AMONG = ("adahedge", "adahedge_stacked")
OUTSIDE_FEATURE = "user_wait_count"  # with the queue's waiting-job count (``wait_count``)


def outside_seen(features: np.ndarray, seen_max: np.ndarray, factor: float = 1.0) -> np.ndarray:
    """Rows with any feature above ``factor`` x its largest value in the seen (tuning) part.

    features : (n, k) the target's state values (e.g. user waiting jobs, queue waiting jobs).
    seen_max : (k,) their maxima over the tuning part.
    """
    feats = np.atleast_2d(np.asarray(features, dtype=float))
    bound = factor * np.asarray(seen_max, dtype=float)
    return np.any(feats > bound[None, :], axis=1)


def scored_rows(usable: np.ndarray, n_tune: int, max_scored: int) -> np.ndarray:
    """Every ``stride``-th usable row after the tuning part, at most ``max_scored`` of them."""
    rows = np.flatnonzero(np.asarray(usable, dtype=bool)[n_tune:]) + n_tune
    stride = max(1, -(-rows.size // max(max_scored, 1)))
    return rows[::stride].astype(np.int64)


class AutoWait(WaitEstimator):
    """The registered ``auto`` method (module docstring).

    Parameters
    ----------
    candidates : registry names of the experts (``zero`` must stay in: the guard needs it).
    safe : the expert the fallback may choose besides the mix and zero (on the dev runs it had
        the lowest AAE on jobs outside the seen states, docs/results.md).
    round_size, window, guard_window, min_known, memory, rule, guard_answer, fallback_among,
    guard_span_s, meta, guard_waiting, fallback_waiting, weights_waiting : :class:`HedgeSelector`
        (``fallback_among="all"`` chosen on the tuning parts among the fourth pass's six
        variants, ``meta`` "guard" kept there; ``rule="fixedshare_mem"``, chosen there among
        the fifth pass's ten, answered worse than always-zero on HPC2N's test part, so
        ``adahedge`` stays: docs/results.md "Fourth pass", "Fifth pass"; ``guard_waiting``
        chosen there among the sixth pass's two variants, "Sixth pass"; ``weights_waiting``
        chosen there among the eighth pass's two, "Eighth pass"; ``rule="adahedge_grad"``,
        chosen there in the tenth pass, lost "within 2%" on lublin-aaroh's test part, so
        ``adahedge`` stays: "Ninth and tenth passes"; so did ``rule="adahedge_stacked"``,
        chosen there in the eleventh pass: "Eleventh pass"). ``rule="choose"`` (the default
        since the twelfth pass, "Twelfth pass") picks one of them per site at ``fit``.
    rule_among : ``rule="choose"``'s candidates (:meth:`_choose_rule`).
    n_validation : tuning-part jobs scored by the half-fitted experts.
    max_scored : at most this many test-part rows are scored (bounds the work per site).
    outside_factor : :func:`outside_seen`'s factor.
    skip_below : an answer reads only the experts whose weight in its mix exceeds this (and
        the one its fallback or guard answers with): :meth:`HedgeSelector.reads`. It moves
        by at most this times a left-out expert's prediction (1e-12: under a millisecond for
        any wait below 30 years), the same from a log row or a snapshot, alone or in a
        batch. On a snapshot's requests an expert no answer reads is not asked at all (its
        ``candidate_<name>_s`` is NaN): most of ``auto``'s cost at a site whose weight sits
        on two experts. Log rows ask every expert (evaluations report each one's score).
        0: every expert, every answer as before this option.
    random_state : passed to every candidate.
    make : ``make(name, random_state)`` builds a candidate (the registry passes its
        ``make_method``; injected so that this module does not import the registry).
    """

    name = "auto"

    def __init__(
        self,
        candidates: Sequence[str] = CANDIDATES,
        safe: str = "gbm",
        round_size: int = 25,
        window: int = 1000,
        guard_window: int = 3000,
        min_known: int = 50,
        memory: float = 3000.0,
        rule: str = "choose",
        rule_among: Sequence[str] = RULE_AMONG,
        guard_answer: str = "zero",
        fallback_among: str = "all",
        guard_span_s: float | None = None,
        meta: str = "guard",
        guard_waiting: bool = True,
        fallback_waiting: bool = False,
        weights_waiting: bool = True,
        n_validation: int = 1000,
        max_scored: int = 10000,
        outside_factor: float = 1.0,
        skip_below: float = 1e-12,
        random_state: int | None = 0,
        make: Callable[[str, int | None], Any] | None = None,
    ) -> None:
        self.candidates = candidates
        self.safe = safe
        self.round_size = round_size
        self.window = window
        self.guard_window = guard_window
        self.min_known = min_known
        self.memory = memory
        self.rule = rule
        self.rule_among = rule_among
        self.guard_answer = guard_answer
        self.fallback_among = fallback_among
        self.guard_span_s = guard_span_s
        self.meta = meta
        self.guard_waiting = guard_waiting
        self.fallback_waiting = fallback_waiting
        self.weights_waiting = weights_waiting
        self.n_validation = n_validation
        self.max_scored = max_scored
        self.outside_factor = outside_factor
        self.skip_below = skip_below
        self.random_state = random_state
        self.make = make

    def __getstate__(self) -> dict[str, Any]:
        """Lent answers (:meth:`lend`) stay with the evaluation that lent them."""
        state = self.__dict__.copy()
        state.pop("_lent", None)
        state.pop("_offered", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A model pickled before the guard could count time or Prod existed answers as it did.
        The rule over the pool (``_selector``) is rebuilt from the stored pool on first use:
        a rule pickled by older code may lack what the current one reads."""
        state.setdefault("fallback_among", "safe")
        state.setdefault("guard_span_s", None)
        state.setdefault("meta", "guard")
        state.setdefault("guard_waiting", False)
        state.setdefault("fallback_waiting", False)
        state.setdefault("weights_waiting", False)
        state.setdefault("skip_below", 0.0)
        state.setdefault("rule_among", RULE_AMONG)  # pickled with a fixed rule: kept
        state["_selector"] = None
        self.__dict__.update(state)

    def same_expert(self, name: str, method: Any) -> bool:
        """Is ``method`` (fitted elsewhere, e.g. an evaluation's standalone run) the expert
        ``name`` here: the same class with the same parameters, fitted on the very same
        history? Fitting is deterministic, so its row answers are then the expert's own."""
        mine = getattr(self, "methods_", {}).get(name)
        return (
            mine is not None
            and type(mine) is type(method)
            and mine.get_params() == method.get_params()
            and getattr(mine, "history_", None) is getattr(method, "history_", None) is not None
        )

    def adopt(self, name: str, method: Any) -> None:
        """Offer expert ``name`` already fitted elsewhere (an evaluation's standalone run of
        the same method). The next :meth:`fit` uses it instead of fitting its own when it is
        the expert that fit would build: the same class and parameters, fitted on the very
        context ``fit`` is given. Fitting is deterministic, so the expert is the same and so
        is every answer; ``auto`` beside its experts then fits none of them twice. Offers
        are dropped by ``fit`` and never pickled."""
        offered = self.__dict__.setdefault("_offered", {})  # not an __init__ parameter
        offered[name] = method

    def _expert(self, name: str, history: WaitContext) -> Any:
        """Expert ``name`` fitted on ``history``: the one offered (:meth:`adopt`) when it is
        that very expert, else a fresh one."""
        fresh = self.make(name, self.random_state)  # type: ignore[misc]
        offered = self.__dict__.get("_offered", {}).get(name)
        if (
            offered is not None
            and type(offered) is type(fresh)
            and offered.get_params() == fresh.get_params()
            and getattr(offered, "history_", None) is history
        ):
            return offered
        return fresh.fit(history)

    def lend(self, name: str, rows: np.ndarray, wait_s: np.ndarray) -> None:
        """Expert ``name``'s answers at log ``rows``, computed by a method for which
        :meth:`same_expert` holds: row answers (the pool and ``predict_rows``) read them
        instead of asking the expert again. A row's answer depends on that row only
        (``predictor.core.chunks``), so they are the expert's own answers; rows not lent are
        asked as before. An evaluation of ``auto`` beside its experts thus predicts each
        expert's rows once (``predictor.core.wait.evaluate``)."""
        rows = np.asarray(rows, dtype=np.int64)
        order = np.argsort(rows, kind="stable")
        lent = self.__dict__.setdefault("_lent", {})  # not an __init__ parameter (contract)
        lent[name] = (rows[order], np.asarray(wait_s, dtype=float)[order])

    def lent(self) -> tuple[str, ...]:
        """The experts whose row answers were lent."""
        return tuple(self._lent_answers())

    def _lent_answers(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        lent: dict[str, tuple[np.ndarray, np.ndarray]] = self.__dict__.get("_lent", {})
        return lent

    def _expert_rows(self, name: str, rows: np.ndarray, progress: Progress) -> np.ndarray:
        """Expert ``name``'s answers at ``rows``: lent where lent, asked otherwise."""
        lent = self._lent_answers().get(name)
        if lent is None or lent[0].size == 0:
            return self.methods_[name].predict_rows(rows, progress=progress).wait_s
        have_rows, have = lent
        pos = np.minimum(np.searchsorted(have_rows, rows), have_rows.size - 1)
        found = have_rows[pos] == rows
        out = np.empty(rows.size)
        out[found] = have[pos[found]]
        if not found.all():
            missing = rows[~found]
            out[~found] = self.methods_[name].predict_rows(missing, progress=progress).wait_s
        return out

    def _learn(self, history: WaitContext) -> None:
        if self.make is None:
            raise ValueError("auto needs make=registry.make_method to build its candidates")
        names = list(self.candidates)
        self.safe_index_ = expert_index(names, self.safe)
        self.zero_index_ = expert_index(names, "zero")
        user = np.asarray(history.state.summary, dtype=float)[:, self._user_col(history)]
        queue = np.asarray(history.state.wait_count, dtype=float)
        seen = slice(0, history.n_tune)
        self.seen_max_ = np.array([user[seen].max(initial=0.0), queue[seen].max(initial=0.0)])
        self.row_outside_ = outside_seen(np.c_[user, queue], self.seen_max_, self.outside_factor)
        self.validation_rows_ = self._validation_rows(history)
        half = WaitContext(history.jobs, history.state, history.n_tune // 2, history.machine_procs)
        self.methods_ = {}
        val = np.zeros((len(names), self.validation_rows_.size))
        for k, name in enumerate(names):
            if self.validation_rows_.size:
                early = self.make(name, self.random_state).fit(half)
                val[k] = early.predict_rows(self.validation_rows_).wait_s
            self.methods_[name] = self._expert(name, history)
        offered = self.__dict__.pop("_offered", {})
        self.adopted_ = [n for n in names if offered.get(n) is self.methods_[n]]
        self.validation_pred_ = val
        usable, _ = usable_mask(history.jobs)
        self.scored_rows_ = scored_rows(usable, history.n_tune, self.max_scored)
        self._scored_pred = np.zeros((len(names), 0))
        self._selector: HedgeSelector | None = None
        self.rule_choice_ = self._choose_rule(history)

    def _choose_rule(self, history: WaitContext) -> dict[str, Any] | None:
        """None for a fixed ``rule``; with ``rule="choose"``, the record of the one of
        ``rule_among`` whose answers on the validation jobs (the half-fitted experts'
        predictions, each job answered at its own arrival by a selector over those jobs
        alone) have the lowest AAE; the first at a tie or without validation jobs. The
        tuning part only: no test row is read."""
        if self.rule != "choose":
            return None
        rows = self.validation_rows_
        among = list(self.rule_among)
        if rows.size == 0:
            return {"rule": among[0], "reason": "no validation jobs to choose on yet"}
        jobs = history.jobs
        wait = jobs["wait_time"].to_numpy(dtype=float)[rows]
        at = jobs["submit_time"].to_numpy(dtype=float)[rows]
        aae = {}
        for rule in among:
            sel = self._build(rows[:0], rule)
            got = sel.select(self.validation_pred_, rows, at, self.row_outside_[rows])
            aae[rule] = float(np.mean(np.abs(got.wait_s - wait)))
        best = min(among, key=lambda r: (aae[r], among.index(r)))
        return {"rule": best, "validation_jobs": int(rows.size), "aae_s": aae}

    def chosen_rule(self) -> str:
        """The rule the answers use: ``rule``, or the one chosen at ``fit``."""
        if self.rule != "choose":
            return self.rule
        choice = getattr(self, "rule_choice_", None)
        return str(choice["rule"] if choice else self.rule_among[0])

    def _validation_rows(self, history: WaitContext) -> np.ndarray:
        half = history.n_tune // 2
        mask, _ = usable_mask(history.jobs.iloc[: history.n_tune])
        rows = np.flatnonzero(mask[half:]) + half
        if rows.size > self.n_validation:
            pick = np.linspace(0, rows.size - 1, self.n_validation).round().astype(np.int64)
            rows = rows[np.unique(pick)]
        return rows.astype(np.int64)

    @staticmethod
    def _user_col(history: WaitContext) -> int:
        return list(history.state.summary_names).index(OUTSIDE_FEATURE)

    def selector(self, n_before: int, progress: Progress = None) -> HedgeSelector:
        """The rule over a pool holding every scored row below ``n_before`` (grown on demand;
        rows arrived later never change an answer: ``predictor.core.wait.selection``)."""
        need = int(np.searchsorted(self.scored_rows_, n_before, "left"))
        have = self._scored_pred.shape[1]
        if self._selector is None or need > have:
            if need > have:
                new = self.scored_rows_[have:need]
                m = len(self.methods_)
                more = np.stack(
                    [
                        self._expert_rows(name, new, _part(progress, k, m))
                        for k, name in enumerate(self.methods_)
                    ]
                )
                self._scored_pred = np.concatenate([self._scored_pred, more], axis=1)
            self._selector = self._build(self.scored_rows_[: self._scored_pred.shape[1]])
        return self._selector

    def train_ahead(self, tuning_part: bool = True) -> AutoWait:
        """Every expert's lazily trained models, then the pool grown to the whole log (every
        scored row predicted by every expert): an answer at any instant then only reads it.
        The pool below an instant is the one a lazy call grows, so answers are unchanged."""
        for method in self.methods_.values():
            method.train_ahead(tuning_part)
        self.selector(len(self._fitted().jobs))
        return self

    def _build(self, scored: np.ndarray, rule: str | None = None) -> HedgeSelector:
        jobs = self._fitted().jobs
        rows = np.concatenate([self.validation_rows_, scored])
        submit = jobs["submit_time"].to_numpy(dtype=float)[rows]
        wait = jobs["wait_time"].to_numpy(dtype=float)[rows]
        pool = Pool(
            pred_s=np.concatenate([self.validation_pred_, self._scored_pred], axis=1),
            wait_s=wait, start_s=submit + wait, arrival_s=submit, row=rows,
            outside=self.row_outside_[rows],
        )  # fmt: skip
        return HedgeSelector(
            pool, safe=self.safe_index_, zero=self.zero_index_, round_size=self.round_size,
            window=self.window, guard_window=self.guard_window, min_known=self.min_known,
            memory=self.memory, rule=rule or self.chosen_rule(), guard_answer=self.guard_answer,
            fallback_among=self.fallback_among, guard_span_s=self.guard_span_s,
            meta=self.meta, guard_waiting=self.guard_waiting,
            fallback_waiting=self.fallback_waiting, weights_waiting=self.weights_waiting,
            names=list(self.methods_),
        )  # fmt: skip

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        names = list(self.methods_)
        n_max = int(targets.n_before.max(initial=0))
        selector = self.selector(n_max, _share(progress, 0.0, 0.6))
        col = self._user_col(self._fitted())
        feats = np.c_[targets.summary[:, col], targets.wait_count]
        outside = outside_seen(feats, self.seen_max_, self.outside_factor)
        asked: np.ndarray = np.ones(len(names), dtype=bool)
        reads = None
        plan = selector.plan(targets.n_before, targets.known_at_s)
        if targets.rows is None and self.skip_below > 0:  # a snapshot: what the answers read
            reads = selector.reads(
                targets.n_before, targets.known_at_s, outside, self.skip_below, plan
            )
            asked = np.asarray(reads.any(axis=1), dtype=bool)
        preds = self._candidates(targets, _share(progress, 0.6, 1.0), asked)
        sel = selector.select(
            preds, targets.n_before, targets.known_at_s, outside, self.skip_below, reads, plan
        )
        extra: dict[str, np.ndarray] = {
            "recent_aae_s": sel.recent_aae_s,
            "recent_zero_aae_s": sel.recent_zero_aae_s,
            "rounds_known": sel.rounds,
            "share_rule": sel.share,
        }
        for k, name in enumerate(names):
            extra[f"weight_{name}"] = sel.weights[:, k]
            extra[f"candidate_{name}_s"] = preds[k] if asked[k] else np.full(len(targets), np.nan)
        return WaitPrediction(wait_s=sel.wait_s, predictor=sel.answered_by, extra=extra)

    def _candidates(
        self, targets: WaitTargets, progress: Progress, asked: np.ndarray
    ) -> np.ndarray:
        """(m, n) the experts' predictions; 0 for an expert not ``asked`` (no answer reads
        it: ``skip_below``)."""
        names = list(self.methods_)
        out = np.zeros((len(names), len(targets)))
        for k, name in enumerate(names):
            if not asked[k]:
                continue
            part = _part(progress, k, len(names))
            method = self.methods_[name]
            if targets.rows is not None and name in self._lent_answers():
                out[k] = self._expert_rows(name, targets.rows, part)
            elif getattr(method, "history_", None) is self._fitted():  # built once for all
                out[k] = method.predict_targets(targets, progress=part).wait_s
            elif targets.rows is not None:
                out[k] = method.predict_rows(targets.rows, progress=part).wait_s
            else:
                out[k] = method.predict(targets.snapshot, targets.requests).wait_s
        return out


def _part(progress: Progress, k: int, m: int) -> Progress:
    """Progress of step ``k`` of ``m`` equal steps."""
    return _share(progress, k / m, (k + 1) / m)


def _share(progress: Progress, lo: float, hi: float) -> Progress:
    if progress is None:
        return None
    return lambda f: progress(lo + (hi - lo) * max(0.0, min(1.0, f)))
