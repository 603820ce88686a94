"""Online expert weighting for ``auto``: AdaHedge over rounds of started jobs, with a guard.

Seed 002 ("End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs",
section on queue-wait prediction) proposes one wait method; which one suits a site is only
known by measuring. ``auto`` treats the methods (always-zero among them) as experts.

**Pool.** Jobs whose candidates' predictions are scored ("pool" jobs) are taken in the order
they *started*: a wait is known at its job's start, never before (the leakage rule of
:mod:`predictor.core.wait.history`). A target arriving at ``t`` with ``n_before`` rows before
it knows the pool jobs that started by ``t`` and arrived before it (a prefix of the pool, as
the log's history is). Consecutive groups of ``round_size`` known pool jobs whose state lay
inside the tuning part's form the rounds of the weights; the others feed the fallback.

**Weights** (AdaHedge: de Rooij, van Erven, Grunwald & Koolen 2014, "Follow the leader if you
can, hedge if you must", JMLR 15). Loss of expert ``c`` in round ``r``: ``l_rc`` = its mean
absolute error over the round's jobs. With cumulative losses ``L_c`` and cumulative mixability
gap ``D``, ``eta = ln(m) / D`` and ``w_c ~ exp(-eta (L_c - min L))`` (uniform over the leaders
while ``D = 0``); after each round ``D += w.l + ln(sum_c w_c exp(-eta l_c)) / eta``. No learning
rate to tune and no loss range to know: the regret against the best expert grows as
``sqrt(L* ln m)`` and the scale of the losses cancels. Sites change (a new heavy user, a new
scheduler setting), so before each round ``L`` and ``D`` are multiplied by
``1 - round_size / memory``: a memory of about ``memory`` pool jobs (the dev runs chose
3 000 for the window of the earlier per-block choice, docs/results.md). The answer is the
weighted mean of the experts' predictions; the absolute error is convex, so its error is at
most the weighted mean of theirs. Every answer is capped at the longest wait known so far:
an expert's wild answer (one a small weight still lets through) cannot then cost more.
``rule`` names other weights over the same rounds (:data:`RULES`): FlipFlop, Fixed-Share
and ML-Poly (:mod:`predictor.core.wait.hedge`), and AdaHedge or ML-Poly fed the tangent of
the mix's error instead of the experts' errors (:mod:`predictor.core.wait.hedge_gradient`),
or AdaHedge over the experts and that linearised mix as one more expert
(:mod:`predictor.core.wait.hedge_stacked`).

**Fallback.** A target whose state lies outside the tuning part's (``outside``) is answered
by the option among (mix, the ``safe`` expert, always-zero) with the lowest AAE over the last
``window`` *outside* pool jobs known; the mix until ``min_known`` of them are known. With
``fallback_among="all"`` the options are the mix and every expert (labelled by name).

**Guard.** If, over the last ``guard_window`` known pool jobs, the answers this rule would
have given (mix or fallback, each at its job's own arrival) lost more than always-zero, or
fewer than ``min_known`` pool jobs are known at all, the target gets zero
(``guard_answer="zero"``). With ``guard_answer="recent_best"`` a guard that fires on the loss
(not on too few known jobs) answers instead with the expert (zero among them) whose AAE over
the same ``guard_window`` known pool jobs is lowest, capped as the options are: zero when zero
is that expert, so the guarded answers lose no more than zero over that window. So ``auto``
is measured online against the safest answer and switches to it when it slips. With
``guard_span_s`` the guard's window is counted in time instead: the known pool jobs that
started in the last ``guard_span_s`` seconds before the target's instant, at least the newest
``min_known`` (a window of 3,000 pool jobs spans about 51,000 log rows on HPC2N, which scores
every 17th row, and about 9,000 on KTH: counted in jobs, the window's reach in time depends on
the log's size). Everything is a function of the known pool jobs only: deterministic, and the
same for a target asked alone or in a batch.

**Jobs still waiting** (``guard_waiting``). The known pool jobs are those that *started*; a
job still waiting at the target's instant is left out of the window, though part of its
outcome is certain. With ``guard_waiting`` the guard fires only when the rule's errors over
the window exceed zero's by more than zero's *certain* lead on the pool jobs waiting then
(arrived before the instant, not started): ``sum e - |e - r|`` over them, ``e`` the time each
has waited so far and ``r`` the rule's answer at its arrival
(:mod:`predictor.core.wait.waiting`). A rule the guard keeps then errs no more than zero over
the window and the waiting jobs together, whatever their waits turn out to be. With
``fallback_waiting`` the fallback's AAE of each option also counts the outside pool jobs
waiting then, each at the least wait it can still have (the time waited so far:
:class:`~predictor.core.wait.waiting.WaitingError`). Both need the
waiting jobs in the pool: a trace's log holds them, a live site's history (finished jobs)
does not, so there both answer as without the options.

With ``weights_waiting`` (AdaHedge only) the mix's weights also count the errors already
certain on the pool jobs inside the seen states still waiting at the answer's instant: a job
that has waited ``e`` and was answered ``p`` by an expert will cost it at least
``max(0, e - p)`` (:class:`~predictor.core.wait.waiting.WaitingShortfall`). Those sums, in
round units (divided by ``round_size``, as a round's loss is its jobs' mean), are added to the
cumulative losses ``L`` of the rounds known then, and the weights are AdaHedge's for that
``L`` and the same gap ``D``: an expert whose short answers the waiting jobs have already
outlived loses weight before those jobs start, not only after. The rule's answers on the pool
(for the fallback and the guard) are computed the same way, at each job's own arrival.
With ``rule="adahedge_grad"`` (AdaHedge on linearised losses) the certain part is the
tangent's: once a waiting job has outwaited the mix's answer (linearised at the weights of the
rounds known at its arrival), the mix certainly answered short, and each expert's tangent
loss is known but for a term shared by all, which the weights ignore
(:class:`~predictor.core.wait.waiting.WaitingTangent`). With ``rule="adahedge_stacked"``
the linearised mix is one more expert: its answer on a waiting job (at the gradient rule's
weights of the rounds known at the job's arrival) counts its certain error like any
expert's, and the ``m + 1`` weights fold into the experts' as every round's do.

**Meta-level** (``meta``). ``"guard"`` is the guard above. ``"abprod"`` replaces it by
(A,B)-Prod (:mod:`predictor.core.wait.prod`): ``A`` is the rule (mix or fallback), ``B``
always-zero, and the answer is ``s A`` (zero's answer is 0) with ``A``'s share ``s`` set by
their losses over rounds of ``round_size`` known pool jobs (all of them, in start order): its
AAE on the pool stays within ``2 ln 2`` scaled units of zero's over the whole record instead of
being checked over a window. ``"abprod_safe"`` first combines the rule with the safe expert by
the same Prod (``A`` the rule, ``B`` the safe expert: within a constant of the safe expert),
then that with zero. ``"track"`` answers the mean of (the rule, the safe expert, zero)
weighted by Fixed-Share (:func:`~predictor.core.wait.hedge.fixed_share`, share ``1 / (r + 1)``
after round ``r``, no discount) over the same rounds: unlike Prod's share, which never forgets
the rule's good record, its weights follow whichever of the three has been best lately.
Fewer than ``min_known`` known pool jobs still give 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from predictor.core.lru import LRU, kept_on
from predictor.core.wait.hedge import (
    WEIGHT_RULES,
    adahedge,
    adahedge_states,
    fixed_share,
    flipflop,
    weights_given,
)
from predictor.core.wait.hedge_gradient import GRADIENT_RULES, adahedge_gradient_states
from predictor.core.wait.hedge_stacked import STACKED_RULES, adahedge_stacked_states, fold
from predictor.core.wait.prod import ab_prod_share, round_losses
from predictor.core.wait.waiting import (
    WaitingError,
    WaitingLead,
    WaitingShortfall,
    WaitingTangent,
)

__all__ = [
    "RULES",
    "WEIGHT_RULES",
    "HedgeSelector",
    "Pool",
    "Selection",
    "adahedge",
    "fixed_share",
    "flipflop",
]

MIX, SAFE, ZERO = 0, 1, 2
OPTION_NAMES = ("mix", "safe", "zero")
GUARD_ANSWERS = ("zero", "recent_best")
#: what keeps the rule safe: the guard, (A,B)-Prod against zero, or Prod against the safe
#: expert and then against zero (module docstring, :mod:`predictor.core.wait.prod`), or
#: Fixed-Share over the rule, the safe expert and zero
METAS = ("guard", "abprod", "abprod_safe", "track")
FALLBACK_AMONG = ("safe", "all")
#: every weight rule: on the rounds' losses (:data:`WEIGHT_RULES`), on their linearised
#: losses (:data:`~predictor.core.wait.hedge_gradient.GRADIENT_RULES`), or on both
#: (:data:`~predictor.core.wait.hedge_stacked.STACKED_RULES`)
RULES = (*WEIGHT_RULES, *GRADIENT_RULES, *STACKED_RULES)
#: the rules whose weights can count the waiting jobs' certain losses (``weights_waiting``)
WAITING_WEIGHT_RULES = ("adahedge", "adahedge_grad", "adahedge_stacked")
PLANS_KEPT = 4096  # one target's plans kept per selector (HedgeSelector.plan)
#: guard windows in time tried on the tuning parts (None: ``guard_window`` pool jobs), seconds
GUARD_SPANS_S: tuple[float | None, ...] = (None, 86400.0, 7 * 86400.0, 30 * 86400.0)


@dataclass(frozen=True)
class Pool:
    """Scored jobs: the experts' predictions and what was known about each job.

    pred_s : (m, P) each expert's prediction for the job, made at the job's own arrival.
    wait_s : (P,) actual waits; start_s = arrival + wait is when each became known.
    row : (P,) the job's row (arrival order) in the log.
    outside : (P,) whether the job's own state lay outside the tuning part's.
    """

    pred_s: np.ndarray
    wait_s: np.ndarray
    start_s: np.ndarray
    arrival_s: np.ndarray
    row: np.ndarray
    outside: np.ndarray

    def sorted(self) -> Pool:
        """The same pool in start order (ties by row)."""
        order = np.lexsort((self.row, self.start_s))
        return Pool(
            self.pred_s[:, order], self.wait_s[order], self.start_s[order],
            self.arrival_s[order], self.row[order], self.outside[order],
        )  # fmt: skip


@dataclass(frozen=True)
class Selection:
    """``auto``'s answers and why.

    wait_s : (n,) answers; answered_by : (n,) "mix", "fallback:<option>" or "guard:zero";
    weights : (n, m) the experts' weights; rounds : (n,) rounds known;
    recent_aae_s, recent_zero_aae_s : (n,) the rule's and always-zero's AAE over the guard
    window (NaN before any pool job is known); share : (n,) the rule's share of the answer
    (the guard: 1 or 0; Prod: ``s``).
    """

    wait_s: np.ndarray
    answered_by: np.ndarray
    weights: np.ndarray
    rounds: np.ndarray
    recent_aae_s: np.ndarray
    recent_zero_aae_s: np.ndarray
    share: np.ndarray


@dataclass(frozen=True)
class Plan:
    """Per target, what its answer reads besides the experts' predictions
    (:meth:`HedgeSelector.plan`): pool jobs ``known``; the mix's ``weights`` (n, m); the
    ``fallback``'s option; the guard window's job ``count`` and the rule's and always-zero's
    summed errors over it (``rule_err``, ``zero_err``); whether the ``guard`` fires (under
    a meta-level: too few known jobs) and the expert it answers with (``pick``)."""

    known: np.ndarray
    weights: np.ndarray
    fallback: np.ndarray
    count: np.ndarray
    rule_err: np.ndarray
    zero_err: np.ndarray
    guard: np.ndarray
    pick: np.ndarray


class HedgeSelector:
    """The module's rule, prepared once from a pool and asked for any targets.

    Parameters
    ----------
    pool : the scored jobs (any order).
    safe : index of the fallback's ``safe`` expert; zero : index of always-zero.
    round_size, window, guard_window, min_known, memory : module docstring (in pool jobs).
    rule : the weights, a name of :data:`RULES`: ``"adahedge"`` (:func:`adahedge`),
        ``"flipflop"`` (:func:`flipflop`), ``"mlpoly"``, or one on linearised losses
        (``"adahedge_grad"``, ``"mlpoly_grad"``: :mod:`predictor.core.wait.hedge_gradient`),
        or AdaHedge over the experts and their linearised mix (``"adahedge_stacked"``:
        :mod:`predictor.core.wait.hedge_stacked`).
    guard_answer : what a fired guard answers, ``"zero"`` or ``"recent_best"`` (module
        docstring).
    fallback_among : the fallback's options besides the mix, ``"safe"`` (the safe expert and
        zero) or ``"all"`` (every expert).
    guard_span_s : the guard's window in seconds of start time (module docstring); None counts
        it in pool jobs (``guard_window``).
    meta : ``"guard"``, ``"abprod"`` or ``"abprod_safe"`` (module docstring).
    guard_waiting : the guard also counts zero's certain lead on the pool jobs still waiting
        (module docstring, "Jobs still waiting").
    fallback_waiting : the fallback also counts each option's error on the outside pool jobs
        still waiting, were they to start at the target's instant (same paragraph).
    weights_waiting : the mix's weights also count the experts' certain errors on the inside
        pool jobs still waiting (same paragraph; ``rule="adahedge"`` only).
    names : the experts' names, for ``answered_by`` ("guard:<name>"; default ``expert<k>``).
    """

    def __init__(
        self,
        pool: Pool,
        *,
        safe: int,
        zero: int,
        round_size: int = 25,
        window: int = 1000,
        guard_window: int = 3000,
        min_known: int = 50,
        memory: float = 3000.0,
        rule: str = "adahedge",
        guard_answer: str = "zero",
        fallback_among: str = "safe",
        guard_span_s: float | None = None,
        meta: str = "guard",
        guard_waiting: bool = False,
        fallback_waiting: bool = False,
        weights_waiting: bool = False,
        names: Sequence[str] = (),
    ) -> None:
        if meta not in METAS:
            raise ValueError(f"meta must be one of {METAS}, got {meta!r}")
        self.meta = meta
        if rule not in RULES:
            raise ValueError(f"rule must be one of {sorted(RULES)}, got {rule!r}")
        if guard_answer not in GUARD_ANSWERS:
            raise ValueError(f"guard_answer must be one of {GUARD_ANSWERS}, got {guard_answer!r}")
        if fallback_among not in FALLBACK_AMONG:
            raise ValueError(
                f"fallback_among must be one of {FALLBACK_AMONG}, got {fallback_among!r}"
            )
        if weights_waiting and rule not in WAITING_WEIGHT_RULES:
            raise ValueError(
                f"weights_waiting needs a rule of {WAITING_WEIGHT_RULES}, got {rule!r}"
            )
        self.weights_waiting = weights_waiting
        self.rule, self.guard_answer = rule, guard_answer
        m = pool.pred_s.shape[0]
        self.option_experts_ = [safe, zero] if fallback_among == "safe" else list(range(m))
        self.names = tuple(names) or tuple("zero" if k == zero else f"expert{k}" for k in range(m))
        if round_size < 1 or window < 1 or guard_window < 1 or min_known < 1:
            raise ValueError("round_size, window, guard_window and min_known must be >= 1")
        if memory < round_size:
            raise ValueError(f"memory must be >= round_size ({round_size}), got {memory}")
        if guard_span_s is not None and not guard_span_s > 0:
            raise ValueError(f"guard_span_s must be > 0 or None, got {guard_span_s}")
        self.guard_span_s = guard_span_s
        self.guard_waiting = guard_waiting
        self.fallback_waiting = fallback_waiting
        self.memory = memory
        self.pool = pool.sorted()
        self.safe, self.zero = safe, zero
        self.option_names_ = OPTION_NAMES if fallback_among == "safe" else ("mix", *self.names)
        self.round_size, self.window = round_size, window
        self.guard_window, self.min_known = guard_window, min_known
        self._prepare()

    def _prepare(self) -> None:
        p = self.pool
        # a pool job is known to a target once it started and had arrived before it
        self.cum_max_row_ = np.maximum.accumulate(p.row) if p.row.size else p.row
        inside = np.flatnonzero(~p.outside)
        self.cum_inside_ = _cumsum0(~p.outside).astype(np.int64)
        known = self.known(p.row, p.arrival_s)
        self._prepare_weights(inside, known[inside])
        self.max_known_ = np.concatenate([[0.0], np.maximum.accumulate(p.wait_s)])
        # the rule's own answers on the pool, each at its job's arrival (for fallback and guard)
        self.options_ = self._options(p.pred_s, known, self.mix_weights(known, p.arrival_s))
        out_err = np.abs(self.options_ - p.wait_s) * p.outside
        self.cum_out_err_ = _cumsum0(out_err)
        self.cum_out_n_ = _cumsum0(p.outside).astype(np.int64)
        self.out_pos_ = np.append(np.flatnonzero(p.outside), 0)  # padded: never empty
        out = p.outside
        self.waiting_err_ = (
            WaitingError(p.arrival_s[out], p.start_s[out], self.options_[:, out])
            if self.fallback_waiting
            else None
        )
        fb = self._fallback(known, p.arrival_s)
        rule = np.where(p.outside, self.options_[fb, np.arange(p.row.size)], self.options_[MIX])
        self.cum_rule_err_ = _cumsum0(np.abs(rule - p.wait_s))
        self.waiting_lead_ = (
            WaitingLead(p.arrival_s, p.start_s, rule) if self.guard_waiting else None
        )
        self.cum_zero_err_ = _cumsum0(np.abs(p.wait_s))
        self._prepare_prod(rule, known)
        self.cum_expert_err_ = _cumsum0(
            np.abs(np.minimum(p.pred_s, self.max_known_[known]) - p.wait_s)
        )

    def _prepare_weights(self, inside: np.ndarray, known: np.ndarray) -> None:
        """The mix's weights after each round of ``round_size`` inside pool jobs (``inside``,
        in start order; ``known``: the pool jobs each knew at its arrival), and with
        ``weights_waiting`` the state they were computed from and the waiting jobs' certain
        losses (module docstring)."""
        p, size = self.pool, self.round_size
        n_rounds = inside.size // size
        used = inside[: n_rounds * size]
        pred = p.pred_s[:, used].reshape(p.pred_s.shape[0], n_rounds, size)
        wait = p.wait_s[used].reshape(n_rounds, size)
        discount = 1.0 - size / self.memory
        self.shortfall_: WaitingShortfall | WaitingTangent | None = None
        self.stack_grad_: np.ndarray | None = None
        at, arrival, start = p.pred_s[:, inside], p.arrival_s[inside], p.start_s[inside]
        if self.rule in STACKED_RULES:
            ext, cum, gap, grad = adahedge_stacked_states(pred, wait, discount)
            self.weights_ = fold(ext, grad)
            if self.weights_waiting:  # the linearised mix's certain losses as an expert's
                self.hedge_cum_, self.hedge_gap_, self.stack_grad_ = cum, gap, grad
                mix = _mix(grad[self.rounds(known)], at)  # at the rounds known at each arrival
                self.shortfall_ = WaitingShortfall(arrival, start, np.vstack([at, mix]))
        elif self.rule in GRADIENT_RULES and not self.weights_waiting:
            self.weights_ = GRADIENT_RULES[self.rule](pred, wait, discount)
        elif self.rule in GRADIENT_RULES:  # adahedge_grad: the certain tangent losses
            states = adahedge_gradient_states(pred, wait, discount)
            self.weights_, self.hedge_cum_, self.hedge_gap_ = states
            mix = _mix(self.weights_[self.rounds(known)], at)  # at the rounds known then
            self.shortfall_ = WaitingTangent(arrival, start, mix, at)
        else:
            losses = np.abs(pred - wait).mean(axis=2).T
            if not self.weights_waiting:
                self.weights_ = WEIGHT_RULES[self.rule](losses, discount)
                return
            self.weights_, self.hedge_cum_, self.hedge_gap_ = adahedge_states(losses, discount)
            self.shortfall_ = WaitingShortfall(arrival, start, at)

    def _prepare_prod(self, rule: np.ndarray, known: np.ndarray) -> None:
        """Prod shares per round of known pool jobs (start order): the rule against the safe
        expert (``abprod_safe``; else share 1), then that against zero; or (``track``) the
        Fixed-Share weights of the rule, the safe expert and zero."""
        p, size = self.pool, self.round_size
        n_rounds = p.row.size // size + 1
        self.share_in_ = np.ones(n_rounds)
        answer = rule
        if self.meta == "track":
            safe = np.minimum(p.pred_s[self.safe], self.max_known_[known])
            cum = _cumsum0(np.abs(np.vstack([rule, safe, np.zeros_like(rule)]) - p.wait_s))
            self.track_ = fixed_share(round_losses(cum, size).T)
            self.share_ = self.track_[:, 0]
            return
        if self.meta == "abprod_safe":
            safe = np.minimum(p.pred_s[self.safe], self.max_known_[known])
            self.share_in_ = ab_prod_share(
                round_losses(self.cum_rule_err_, size),
                round_losses(_cumsum0(np.abs(safe - p.wait_s)), size),
            )
            s_in = self.share_in_[known // size]
            answer = s_in * rule + (1.0 - s_in) * safe
        cum_a = _cumsum0(np.abs(answer - p.wait_s))
        zero = round_losses(self.cum_zero_err_, size)
        self.share_ = ab_prod_share(round_losses(cum_a, size), zero)

    def _prod(self, answer: np.ndarray, pred: np.ndarray, known: np.ndarray) -> np.ndarray:
        """The Prod (or ``track``) answers of the targets from the rule's (``meta``)."""
        r = known // self.round_size
        if self.meta == "track":
            safe = np.minimum(pred[self.safe], self.max_known_[known])
            return self.track_[r, 0] * answer + self.track_[r, 1] * safe
        if self.meta == "abprod_safe":
            safe = np.minimum(pred[self.safe], self.max_known_[known])
            answer = self.share_in_[r] * answer + (1.0 - self.share_in_[r]) * safe
        return self.share_[r] * answer

    def known(self, n_before: np.ndarray, known_at_s: np.ndarray) -> np.ndarray:
        """Pool jobs known to each target (a prefix of the pool in start order): started by
        ``known_at_s`` (ties at that second by row) and arrived before row ``n_before``."""
        t = np.asarray(known_at_s, dtype=float)
        by_time = np.searchsorted(self.pool.start_s, t, "right")
        by_row = np.searchsorted(self.cum_max_row_, np.asarray(n_before), "left")
        return np.minimum(by_time, by_row).astype(np.int64)

    def rounds(self, known: np.ndarray) -> np.ndarray:
        """Complete rounds (of jobs inside the seen states) among the first ``known``."""
        return self.cum_inside_[known] // self.round_size

    def mix_weights(self, known: np.ndarray, at_s: np.ndarray) -> np.ndarray:
        """(n, m) the mix's weights of answers knowing the first ``known`` pool jobs at the
        instants ``at_s``: the weights after their complete rounds, or (``weights_waiting``)
        AdaHedge's for those rounds' losses plus the certain errors on the inside pool jobs
        waiting then (module docstring)."""
        r = self.rounds(known)
        if self.shortfall_ is None:
            return self.weights_[r]
        certain = self.shortfall_(np.asarray(at_s, dtype=float)).T / self.round_size
        weights = weights_given(self.hedge_cum_[r] + certain, self.hedge_gap_[r])
        return weights if self.stack_grad_ is None else fold(weights, self.stack_grad_[r])

    def _options(self, pred: np.ndarray, known: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """(1 + k, n) the mix (``weights``: :meth:`mix_weights`) and the fallback's k experts
        (the safe one and zero, or all), each capped at the longest known wait."""
        cap = self.max_known_[known]
        mix = _mix(weights, pred)
        return np.minimum(np.vstack([mix, pred[self.option_experts_]]), cap)

    def _fallback(self, known: np.ndarray, known_at_s: np.ndarray) -> np.ndarray:
        """Option index (of :meth:`_options`) of lowest AAE over the last ``window`` outside pool
        jobs among the first ``known`` (with ``fallback_waiting``, plus each option's error on
        the outside pool jobs still waiting at ``known_at_s``, were they to start then); MIX
        until ``min_known`` of them are known."""
        c_hi = self.cum_out_n_[known]
        c_lo = np.maximum(c_hi - self.window, 0)
        lo = np.where(c_lo > 0, self.out_pos_[np.maximum(c_lo, 1) - 1] + 1, 0)
        err = self.cum_out_err_[:, known] - self.cum_out_err_[:, lo]
        if self.waiting_err_ is not None:
            err = err + self.waiting_err_(np.asarray(known_at_s, dtype=float))
        best = np.argmin(err, axis=0)
        return np.where(c_hi - c_lo >= self.min_known, best, MIX)

    def _guard_pick(self, known: np.ndarray, lo: np.ndarray, count: np.ndarray) -> np.ndarray:
        """Expert a fired guard answers with: zero, or (``recent_best``, given ``min_known``
        known pool jobs) the one of lowest capped AAE over pool jobs ``lo`` to ``known``."""
        pick = np.full(known.size, self.zero)
        if self.guard_answer == "zero":
            return pick
        err = self.cum_expert_err_[:, known] - self.cum_expert_err_[:, lo]
        best = np.argmin(err, axis=0)
        cols = np.arange(known.size)
        better = (count >= self.min_known) & (err[best, cols] < err[self.zero, cols])  # ties: zero
        return np.where(better, best, pick)

    def _guard_lo(self, known: np.ndarray, known_at_s: np.ndarray) -> np.ndarray:
        """First pool job of each target's guard window (its last is ``known - 1``)."""
        if self.guard_span_s is None:
            return np.maximum(known - self.guard_window, 0)
        recent = np.searchsorted(self.pool.start_s, known_at_s - self.guard_span_s, "left")
        newest = np.maximum(known - self.min_known, 0)  # at least min_known jobs when known
        return np.minimum(np.minimum(recent, known), newest).astype(np.int64)

    def _guard_window(
        self, known: np.ndarray, known_at_s: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(first pool job, count, the rule's and zero's summed errors) of each target's guard
        window."""
        lo = self._guard_lo(known, np.asarray(known_at_s, dtype=float))
        rule = self.cum_rule_err_[known] - self.cum_rule_err_[lo]
        zero = self.cum_zero_err_[known] - self.cum_zero_err_[lo]
        return lo, known - lo, rule, zero

    def _waiting_lead(self, known_at_s: np.ndarray) -> np.ndarray | float:
        """Always-zero's certain lead over the rule on the pool jobs still waiting at each
        target's instant (``guard_waiting``; :mod:`predictor.core.wait.waiting`), else 0."""
        if self.waiting_lead_ is None:
            return 0.0
        return self.waiting_lead_(np.asarray(known_at_s, dtype=float))

    def _guard_fires(
        self, count: np.ndarray, rule: np.ndarray, zero: np.ndarray, lead: np.ndarray | float
    ) -> np.ndarray:
        """Too few known jobs, or the rule erred more than zero over the window, less zero's
        certain lead on the jobs still waiting (0 unless ``guard_waiting``)."""
        return (count < self.min_known) | (rule > zero + lead)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the kept plans (:meth:`plan`)."""
        return {k: v for k, v in self.__dict__.items() if k != "_plans"}

    def plan(self, n_before: np.ndarray, known_at_s: np.ndarray) -> Plan:
        """What the answers of targets (rows before each, its instant) read besides the
        experts' predictions: computed once for :meth:`reads` and :meth:`select`.

        It depends on the instant alone (the rows before it and the time), so one target's
        plan is kept (the last ``PLANS_KEPT``, read-only) for the next request at that
        instant: an API asked about one instant, a live site's "now"."""
        if np.size(n_before) != 1 or np.size(known_at_s) != 1:
            return self._plan(n_before, known_at_s)
        nb, at = np.asarray(n_before), np.asarray(known_at_s)
        key = (nb.shape, nb.dtype.str, nb.tobytes(), at.shape, at.dtype.str, at.tobytes())
        kept: LRU[Plan] = kept_on(self, "_plans", lambda: LRU(size=PLANS_KEPT))
        found = kept.get(key)
        if found is not None:
            return found
        made = self._plan(n_before, known_at_s)
        for value in vars(made).values():
            value.setflags(write=False)
        return kept.put(key, made)

    def _plan(self, n_before: np.ndarray, known_at_s: np.ndarray) -> Plan:
        known = self.known(np.asarray(n_before), np.asarray(known_at_s))
        at = np.broadcast_to(np.asarray(known_at_s, dtype=float), known.shape)
        lo, count, rule, zero = self._guard_window(known, known_at_s)
        if self.meta == "guard":
            guard = self._guard_fires(count, rule, zero, self._waiting_lead(known_at_s))
        else:
            guard = known < self.min_known
        return Plan(
            known=known, weights=self.mix_weights(known, at),
            fallback=self._fallback(known, known_at_s), count=count, rule_err=rule,
            zero_err=zero, guard=guard, pick=self._guard_pick(known, lo, count),
        )  # fmt: skip

    def reads(
        self,
        n_before: np.ndarray,
        known_at_s: np.ndarray,
        outside: np.ndarray,
        tiny: float,
        plan: Plan | None = None,
    ) -> np.ndarray:
        """(m, n) whether target j's answer (:meth:`select`) reads expert i's prediction with
        a weight above ``tiny``: the expert a fired guard answers with, the fallback's option,
        or the mix's experts whose weight exceeds ``tiny`` (weights sum to 1).

        :meth:`select` with ``tiny`` answers from these alone, so an expert left out moves a
        mix by its weight times its prediction: by less than ``tiny`` times that prediction.
        ``tiny=0`` leaves out only weights that are exactly 0, so every answer is unchanged
        (AdaHedge's weights are all positive). Prod and ``track`` read the safe expert
        besides: under them every expert is read. ``plan``: :meth:`plan` of the same
        targets when the caller has it."""
        n = np.asarray(n_before).size
        m = self.pool.pred_s.shape[0]
        if self.meta != "guard":
            return np.ones((m, n), dtype=bool)
        plan = self.plan(n_before, known_at_s) if plan is None else plan
        guard, fb = plan.guard, plan.fallback
        single = np.asarray(outside, dtype=bool) & ~guard & (fb != MIX)
        mixed = ~guard & ~single
        need = np.zeros((m, n), dtype=bool)
        cols = np.arange(n)
        need[plan.pick[guard], cols[guard]] = True
        need[np.asarray(self.option_experts_)[fb[single] - 1], cols[single]] = True
        need[:, mixed] = (plan.weights[mixed] > tiny).T
        return need

    def select(
        self,
        pred_s: np.ndarray,
        n_before: np.ndarray,
        known_at_s: np.ndarray,
        outside: np.ndarray,
        tiny: float = 0.0,
        reads: np.ndarray | None = None,
        plan: Plan | None = None,
    ) -> Selection:
        """Answers for targets: experts' predictions (m, n), rows before each, its instant,
        and whether its state lies outside the tuning part's. With ``tiny`` > 0 each answer
        reads only the experts :meth:`reads` names for it (the others count as 0), so it is
        the same alone or in a batch, and whether or not the others were asked. ``reads``:
        that mask, ``plan``: :meth:`plan` of the same targets, when the caller has them."""
        plan = self.plan(n_before, known_at_s) if plan is None else plan
        pred = np.atleast_2d(np.asarray(pred_s, dtype=float))
        if tiny > 0:
            if reads is None:
                reads = self.reads(n_before, known_at_s, outside, tiny, plan)
            pred = np.where(reads, pred, 0.0)
        n = pred.shape[1]
        known, fb, count = plan.known, plan.fallback, plan.count
        opts = self._options(pred, known, plan.weights)
        out = np.asarray(outside, dtype=bool)
        answer = np.where(out, opts[fb, np.arange(n)], opts[MIX])
        by = np.where(out, np.char.add("fallback:", np.array(self.option_names_)[fb]), "mix")
        if self.meta == "guard":
            share = (~plan.guard).astype(float)
        else:
            answer = self._prod(answer, pred, known)
            share = np.where(plan.guard, 0.0, self.share_[known // self.round_size])
        guarded = np.minimum(pred[plan.pick, np.arange(n)], self.max_known_[known])
        answer = np.where(plan.guard, guarded, answer)
        label = np.char.add("guard:", np.array(self.names)[plan.pick])
        by = np.where(plan.guard, label, by).astype(object)
        with np.errstate(invalid="ignore", divide="ignore"):
            return Selection(
                wait_s=np.maximum(answer, 0.0), answered_by=by,
                weights=plan.weights, rounds=self.rounds(known),
                recent_aae_s=np.where(count > 0, plan.rule_err / count, np.nan),
                recent_zero_aae_s=np.where(count > 0, plan.zero_err / count, np.nan),
                share=share,
            )  # fmt: skip


def _mix(weights: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """(n,) each target's mix: its weights (n, m) times its experts' predictions (m, n)."""
    return np.einsum("jm,mj->j", weights, pred)


def _cumsum0(x: np.ndarray) -> np.ndarray:
    """Cumulative sums along the last axis with a leading 0."""
    x = np.asarray(x, dtype=float)
    pad = np.zeros((*x.shape[:-1], 1))
    return np.concatenate([pad, np.cumsum(x, axis=-1)], axis=-1)


def expert_index(names: Sequence[str], name: str) -> int:
    """Position of ``name`` among the experts, with an error naming them when absent."""
    if name not in names:
        raise ValueError(f"{name!r} is not among the candidates {list(names)}")
    return list(names).index(name)
