"""What is already certain about jobs still waiting: a lower bound on always-zero's lead.

``auto``'s guard (:mod:`predictor.core.wait.selection`) compares the rule's absolute errors
with always-zero's on the pool jobs known at an instant ``t``: those that *started* by ``t``.
A job still waiting at ``t`` is left out, although part of its outcome is already certain: it
arrived at ``a < t`` and will wait ``W >= e = t - a``. For an answer ``r >= 0``, always-zero's
error less the answer's is ``W - |W - r|``; as a function of ``W`` this never decreases, so
whatever the wait turns out to be it is at least its value at ``W = e``:

``lead(e, r) = e - |e - r| = min(r, 2e - r)``

(``r`` once the job has waited longer than the answer, ``2e - r`` before, negative while
``e < r / 2``). It is the tight bound: ``W = e`` (the job starts now) attains it. So if the
rule's errors on the known jobs exceed zero's by no more than the summed ``lead`` of the
waiting ones, the rule errs no more than zero over both sets, *whatever* the waiting jobs'
waits turn out to be; otherwise some outcome of theirs would make it err more.

The sum over the pool jobs waiting at ``t`` (``a < t < s``, ``s`` the start) is computed for
many instants at once: each job's term is ``2t - (2a + r)`` on ``(a, min(a + r, s))`` and
``r`` on ``[a + r, s)``, so the sum is ``2t N(t) - G(t) + F(t)`` with ``N`` the count and ``G``
the summed ``2a + r`` of the jobs in their first phase and ``F`` the summed ``r`` of those in
their second, each a difference of two cumulative sums read by ``searchsorted``: no loop over
the pool or the instants.
"""

from __future__ import annotations

from typing import Literal

import numpy as np


def lead(elapsed_s: np.ndarray, answer_s: np.ndarray) -> np.ndarray:
    """``e - |e - r|``: always-zero's error less the answer's, at least, for a job that has
    waited ``e`` and was answered ``r`` (module docstring). Arrays broadcast, seconds."""
    e, r = np.asarray(elapsed_s, dtype=float), np.asarray(answer_s, dtype=float)
    return e - np.abs(e - r)


class _Intervals:
    """Sums of the columns of ``values`` (P, k) over the intervals ``lo < t < hi``
    (``left_open``) or ``lo <= t < hi`` holding each ``t``: (n, k); empty intervals are
    dropped. Both edges are sorted once for all the columns."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, values: np.ndarray, left_open: bool):
        keep = hi > lo
        self.side: Literal["left", "right"] = "left" if left_open else "right"
        by_lo, by_hi = np.argsort(lo[keep], kind="stable"), np.argsort(hi[keep], kind="stable")
        self.lo, self.hi = lo[keep][by_lo], hi[keep][by_hi]
        self.cum_lo, self.cum_hi = _cum0(values[keep][by_lo]), _cum0(values[keep][by_hi])

    def __call__(self, t: np.ndarray) -> np.ndarray:
        began = self.cum_lo[np.searchsorted(self.lo, t, self.side)]
        ended = self.cum_hi[np.searchsorted(self.hi, t, "right")]  # started by t: known
        return began - ended


class WaitingLead:
    """``lead`` summed over the jobs waiting at each instant (module docstring).

    arrival_s, start_s, answer_s : (P,) each job's arrival, start and the answer given to it
    at its arrival (answers below 0 count as 0).
    """

    def __init__(self, arrival_s: np.ndarray, start_s: np.ndarray, answer_s: np.ndarray):
        a = np.asarray(arrival_s, dtype=float)
        s = np.asarray(start_s, dtype=float)
        r = np.maximum(np.asarray(answer_s, dtype=float), 0.0)
        turn = a + r  # the instant the job has waited as long as its answer
        first = np.minimum(turn, s)
        self._growing = _Intervals(a, first, np.c_[np.ones_like(a), 2.0 * a + r], left_open=True)
        after = np.maximum(turn, np.nextafter(a, np.inf))
        self._flat = _Intervals(after, s, r[:, None], left_open=False)

    def __call__(self, t_s: np.ndarray) -> np.ndarray:
        """(n,) the summed lead of the jobs with ``arrival < t < start``, per instant."""
        t = np.asarray(t_s, dtype=float)
        growing = self._growing(t)  # columns: how many, their summed 2a + r
        return 2.0 * t * growing[:, 0] - growing[:, 1] + self._flat(t)[:, 0]


def _cum0(x: np.ndarray) -> np.ndarray:
    """Cumulative sums down the rows of ``x`` (P, k), after a row of zeros: (P + 1, k)."""
    x = np.asarray(x, dtype=float)
    return np.concatenate([np.zeros((1, x.shape[1])), np.cumsum(x, axis=0)])


class WaitingError:
    """Each answer's error on the jobs waiting at each instant, were they to start then:
    ``sum |e - p|`` over the jobs with ``arrival < t < start``, ``e = t - arrival`` (the least
    wait each can still have; for always-zero against one answer its difference is
    :func:`lead`). Per job and answer the term is ``(a + p) - t`` before ``a + p`` and
    ``t - (a + p)`` from then on, summed like :class:`WaitingLead`'s.

    arrival_s, start_s : (P,); answers_s : (K, P) K answers per job (below 0 count as 0).
    """

    def __init__(self, arrival_s: np.ndarray, start_s: np.ndarray, answers_s: np.ndarray):
        a = np.asarray(arrival_s, dtype=float)
        s = np.asarray(start_s, dtype=float)
        answers = np.atleast_2d(np.maximum(np.asarray(answers_s, dtype=float), 0.0))
        self._before = []  # the jobs that have not yet waited as long as their answer
        for p in answers:
            turn = a + p
            counted = np.c_[np.ones_like(a), turn]  # columns: how many, their summed a + p
            self._before.append(_Intervals(a, np.minimum(turn, s), counted, left_open=True))
        self._after = WaitingShortfall(a, s, answers)  # those past it: the certain error

    def __call__(self, t_s: np.ndarray) -> np.ndarray:
        """(K, n) the summed errors per answer and instant."""
        t = np.asarray(t_s, dtype=float).ravel()
        out = self._after(t)
        for k, part in enumerate(self._before):
            before = part(t)
            out[k] = (before[:, 1] - t * before[:, 0]) + out[k]
        return out


class WaitingShortfall:
    """Each answer's *certain* error on the jobs waiting at each instant: a job that arrived
    at ``a`` and was answered ``p`` will wait ``W >= e = t - a``, so its error ``|W - p|`` is
    at least ``max(0, e - p)`` whatever ``W`` turns out to be (tight: the job starting now
    attains it; while ``e <= p`` nothing is certain, ``W = p`` is still possible). Summed over
    the jobs with ``arrival < t < start`` per answer: ``t N(t) - S(t)``, ``N`` how many have
    waited past their answer and ``S`` their summed ``a + p``, read like
    :class:`WaitingLead`'s sums (AdaHedge's weights with ``weights_waiting``,
    :mod:`predictor.core.wait.selection`).

    arrival_s, start_s : (P,); answers_s : (K, P) K answers per job (below 0 count as 0).
    """

    def __init__(self, arrival_s: np.ndarray, start_s: np.ndarray, answers_s: np.ndarray):
        a = np.asarray(arrival_s, dtype=float)
        s = np.asarray(start_s, dtype=float)
        answers = np.atleast_2d(np.maximum(np.asarray(answers_s, dtype=float), 0.0))
        self._parts = []
        for p in answers:
            turn = a + p
            after = np.maximum(turn, np.nextafter(a, np.inf))  # t > a: arrived before t
            self._parts.append(_Intervals(after, s, np.c_[np.ones_like(a), turn], False))

    def __call__(self, t_s: np.ndarray) -> np.ndarray:
        """(K, n) the summed certain errors per answer and instant."""
        t = np.asarray(t_s, dtype=float).ravel()
        out = np.empty((len(self._parts), t.size))
        for k, part in enumerate(self._parts):
            past = part(t)  # columns: how many, their summed a + p
            out[k] = t * past[:, 0] - past[:, 1]
        return out


class WaitingTangent:
    """Each expert's *certain* linearised loss (:mod:`predictor.core.wait.hedge_gradient`) on
    the jobs waiting at each instant, up to a constant shared by the experts. A job that
    arrived at ``a``, whose mix answered ``q``, will wait ``W >= e = t - a``; once ``e > q``
    the mix's error has a certain sign (it answered short), so expert ``c``'s tangent loss
    ``-(p_c - W) = (W - e) + (e - p_c)`` is known but for ``W - e``, the same for every
    expert, which AdaHedge's weights (a function of ``L - min L``) ignore. Summed over the
    jobs with ``a + q < t < start``: ``t N(t) - S_c(t)``, ``N`` how many, ``S_c`` their summed
    ``a + p_c``, read like :class:`WaitingShortfall`'s (while ``e <= q`` the sign is open and
    the job adds nothing).

    arrival_s, start_s, mix_s : (P,); answers_s : (m, P) the experts' answers per job.
    """

    def __init__(
        self, arrival_s: np.ndarray, start_s: np.ndarray, mix_s: np.ndarray, answers_s: np.ndarray
    ):
        a = np.asarray(arrival_s, dtype=float)
        s = np.asarray(start_s, dtype=float)
        answers = np.atleast_2d(np.asarray(answers_s, dtype=float))
        turn = a + np.maximum(np.asarray(mix_s, dtype=float), 0.0)
        after = np.nextafter(turn, np.inf)  # e > q (so t > a): the sign is certain
        self._part = _Intervals(after, s, np.c_[np.ones_like(a), (a + answers).T], False)

    def __call__(self, t_s: np.ndarray) -> np.ndarray:
        """(m, n) the summed certain tangent losses per expert and instant."""
        t = np.asarray(t_s, dtype=float).ravel()
        past = self._part(t)  # columns: how many, then each expert's summed a + p
        return (t[:, None] * past[:, :1] - past[:, 1:]).T
