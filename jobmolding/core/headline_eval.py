"""How well the wait a site tells would have done on a log: each headline rule against the
actual waits, and the rule chosen online as a site chooses it (``manage.py evaluate_headline``).

The log's jobs are answered as a live site answers a new request (``headline_scores
.answer_rows``: the bundle's history estimate and the queue-based start, each job at its own
arrival with nothing later visible). The test part (the jobs after the tuning part) is cut in
blocks of ``block`` jobs, as a site refits as its history grows; at each block's first arrival
``t`` the pool is the ``rule_jobs`` scored jobs that *finished* last by ``t`` (what a
site's history holds, and what its fit scores), and on it

- the rule is chosen (``headline.choose_rule``), as at a site's fit;
- the split-conformal interval at ``level`` is calibrated on that rule's errors (``diff``
  scores, ``predictor.core.wait.intervals``), as ``calibrate`` does.

Every fixed rule is scored the same way (its own pool for its interval), and so is the
service's answer before the rule was chosen: ``later`` with an interval calibrated on the
history estimate's errors (what ``calibrate`` pooled then). The rule chosen online is scored
once more with the interval a site learns since stop 57 (``holdqueue.services.interval``):
the online rule over the jobs told before, each fed as it starts (``_told_online``; since stop
59 the local rule, ``predictor.core.wait.local_interval``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from jobmolding.core.headline import RULES, choose_rule, headline_wait
from jobmolding.core.headline_scores import Answered, last_ended
from predictor.core.wait.intervals import interval_from_pool, known_order, scores
from predictor.core.wait.local_interval import REPLAYED, TOLD_FROM, local_online

ONLINE = "chosen online, interval learnt as told jobs start"


@dataclass(frozen=True)
class RuleScore:
    """One way of telling the wait, on the test jobs: mean absolute error and mean signed
    error (predicted - actual, seconds), the share under-predicted by more than half
    (``actual > 2 p + 60 s``), and the interval's coverage and median width."""

    name: str
    mae_s: float
    bias_s: float
    late_share: float
    coverage: float
    median_width_s: float

    @staticmethod
    def of(name: str, p: np.ndarray, y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> RuleScore:
        covered = (lo <= y) & (y <= hi)
        late = y > 2 * p + 60.0
        return RuleScore(
            name, float(np.mean(np.abs(p - y))), float(np.mean(p - y)), float(np.mean(late)),
            float(np.mean(covered)), float(np.median(hi - lo)),
        )  # fmt: skip


def pools(
    submit_s: np.ndarray, end_s: np.ndarray, test: np.ndarray, block: int, rule_jobs: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(block rows, pool rows)`` per block of the ``test`` rows (positions in the scored
    arrays, in arrival order): the pool is the ``rule_jobs`` rows that ended last by the
    block's first arrival (``headline_scores.last_ended``, as a site's fit scores them)."""
    out = []
    for b in range(0, test.size, block):
        rows = test[b : b + block]
        out.append((rows, last_ended(end_s, rule_jobs, float(submit_s[rows[0]]))))
    return out


def _told(
    rule_of: list[str], h: np.ndarray, q: np.ndarray, y: np.ndarray, blocks: list, level: float,
    pool_from: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Prediction and interval of every block row; block ``k`` answers with ``rule_of[k]``
    and pools that rule's errors (or ``pool_from``'s: the old site's history errors)."""
    p, lo, hi = [], [], []
    for rule, (rows, pool) in zip(rule_of, blocks, strict=True):
        pred = headline_wait(rule, h[rows], q[rows])
        low, high = _fit_interval(pred, pool_from or rule, pool, h, q, y, level)
        p.append(pred)
        lo.append(low)
        hi.append(high)
    return np.concatenate(p), np.concatenate(lo), np.concatenate(hi)


def _fit_interval(
    pred: np.ndarray, rule: str, pool: np.ndarray, h: np.ndarray, q: np.ndarray, y: np.ndarray,
    level: float,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The fit's pool interval of ``pred``: ``rule``'s errors on the ``pool`` rows (NaN, a
    miss, where nothing had finished yet)."""
    if not pool.size:
        return np.full(pred.size, np.nan), np.full(pred.size, np.nan)
    base = headline_wait(rule, h[pool], q[pool])
    return interval_from_pool(pred, scores(base, y[pool]), level)


def _told_online(
    rule_of: list[str], h: np.ndarray, q: np.ndarray, y: np.ndarray, submit_s: np.ndarray,
    blocks: list, level: float, replayed: int = REPLAYED,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Prediction and interval of every block row as a live site learns its interval from the
    jobs it told as they start (``holdqueue.services.interval``): every answered job is a
    told one; block ``k``'s rows get the site's online rule (``local_interval.local_online``,
    its neighbours, window, step and ``min_pool``) run over the ``replayed`` answered jobs
    before the block and the block itself, every job told ``rule_of[k]``'s wait. A site
    restarts that recursion at each start it reads; here at each block. A row answered while
    fewer than ``TOLD_FROM`` of those jobs had started gets the block's fit pool (as
    :func:`_told`), as a site answers until ``TOLD_FROM`` of its told jobs have started."""
    p, lo, hi = [], [], []
    for rule, (rows, pool) in zip(rule_of, blocks, strict=True):
        first = max(int(rows[0]) - replayed, 0)
        span = slice(first, int(rows[-1]) + 1)
        pred = headline_wait(rule, h[span], q[span])
        arrival, known = submit_s[span], submit_s[span] + y[span]
        low, high, _, _ = local_online(pred, y[span], arrival, known, level)
        at = rows - first
        low, high = low[at], high[at]
        few = known_order(arrival, known)[1][at] < TOLD_FROM
        if few.any():
            low[few], high[few] = _fit_interval(pred[at][few], rule, pool, h, q, y, level)
        p.append(pred[at])
        lo.append(low)
        hi.append(high)
    return np.concatenate(p), np.concatenate(lo), np.concatenate(hi)


def evaluate_rules(
    answered: Answered,
    submit_s: np.ndarray,
    end_s: np.ndarray,
    test: np.ndarray,
    *,
    block: int = 500,
    rule_jobs: int = 200,
    level: float = 0.9,
) -> tuple[list[RuleScore], Counter[str]]:
    """Every fixed rule, the service before the choice, and the rule chosen online, on the
    ``test`` positions of ``answered`` (module docstring); and how often each rule was chosen.

    submit_s, end_s : (n,) arrival and end (submit + wait + run) of each scored job.
    test : positions of the test jobs among the scored ones, ascending.
    """
    h, q, y = answered.history_s, answered.queue_s, answered.actual_s
    blocks = pools(submit_s, end_s, test, block, rule_jobs)
    yt = y[test]
    chosen = [choose_rule(h[pool], q[pool], y[pool]).rule for _, pool in blocks]
    ways: list[tuple[str, list[str], str | None]] = [
        *((rule, [rule] * len(blocks), None) for rule in RULES),
        ("later, history pool (before)", ["later"] * len(blocks), "history"),
        ("chosen online", chosen, None),
    ]
    out = []
    for name, rule_of, pool_from in ways:
        p, lo, hi = _told(rule_of, h, q, y, blocks, level, pool_from)
        out.append(RuleScore.of(name, p, yt, lo, hi))
    p, lo, hi = _told_online(chosen, h, q, y, submit_s, blocks, level)
    out.append(RuleScore.of(ONLINE, p, yt, lo, hi))  # the service's interval since stop 57
    zero = np.zeros_like(yt)
    out.append(RuleScore.of("always zero", zero, yt, zero, np.full_like(yt, np.inf)))
    kept: Counter[str] = Counter()
    for (rows, _), rule in zip(blocks, chosen, strict=True):
        kept[rule] += rows.size
    return out, kept
