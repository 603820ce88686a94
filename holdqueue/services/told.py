"""What a site told the jobs submitted through it, read back (``jobmolding.core.told``).

A job submitted at its decision keeps, in its decision record, the answer the site gave for
the size it was submitted with (``record["told"]``, :func:`told_record`: the two wait figures,
the runtime point and, since stop 58, the headline rule that made the wait it was told). When
the job has ended and its history row (``SiteHistory``, keyed by the batch system's id) is
among the last finished jobs a fit scores, that answer is scored instead of answering the job
again (``headline_scores.pooled_answers``). Jobs the site did not submit, or held, have none.

Between fits, the told jobs that have started (:func:`told_started`, read again with the
queue: :func:`told_now`) teach the wait interval (``holdqueue.services.interval``) and say how
far the waits told were off (``holdqueue.services.told_accuracy``); with those still waiting
(:func:`told_waiting`, :func:`waiting_now`) they give ``P(start within T)``
(``holdqueue.services.told_within``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from holdqueue.models import Site, SiteHistory, SiteJob
from holdqueue.services import backends as bk
from jobmolding.core.headline import RULES, headline_wait
from jobmolding.core.told import Told, ToldRows
from predictor.core.lru import LRU
from predictor.core.wait.local_interval import REPLAYED

V = TypeVar("V")


def told_record(predictor: Any, at_s: float, procs: int) -> dict[str, Any]:
    """``{"told": ...}`` for a decision record: what ``predictor`` (the site's ``LiveBundle``)
    told a request of ``procs`` processors on the snapshot of ``at_s``, with the headline rule
    that made its wait (``rule``); empty when it told none (a stubbed predictor)."""
    told_for = getattr(predictor, "told_for", None)
    told = told_for(at_s, procs) if told_for is not None else None
    if not isinstance(told, Told):
        return {}
    rule = getattr(predictor, "rule", None)
    return {"told": {**told.as_dict(), **({"rule": rule} if rule in RULES else {})}}


def site_told(site, finished: np.ndarray) -> Callable[[np.ndarray], ToldRows]:
    """``told(rows)`` over the site's finished history (``finished``: the history frame's
    finished rows, in its order): each row's told answer where its job kept one."""
    keys = np.array(
        SiteHistory.objects.filter(site=site)
        .order_by("submit_s", "id")
        .values_list("job_key", flat=True),
        dtype=object,
    )
    if keys.size != finished.size:  # the history grew since the frame was read
        return lambda rows: ToldRows.none(len(rows))
    keys = keys[finished]

    def told(rows: np.ndarray) -> ToldRows:
        wanted = [str(k) for k in keys[rows]]
        found = dict(
            SiteJob.objects.filter(site=site, backend_job_id__in=wanted)
            .exclude(backend_job_id="")
            .values_list("backend_job_id", "decision")
        )
        return ToldRows.of(_told(found.get(k)) for k in wanted)

    return told


def _told(decision: Any) -> Told | None:
    body = decision.get("told") if isinstance(decision, dict) else None
    if not isinstance(body, dict):
        return None
    try:
        return Told.from_dict(body)
    except (KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class _Figures:
    """Told jobs' two told figures: the history estimate and the queue-based start (``nan``
    where there was none)."""

    history_s: np.ndarray
    queue_s: np.ndarray

    def told_s(self, rule: str) -> np.ndarray:
        """The wait ``rule`` makes of each job's two figures (``headline.headline_wait``)."""
        return headline_wait(rule, self.history_s, self.queue_s)


@dataclass(frozen=True)
class ToldStarted(_Figures):
    """The told jobs that started, in arrival order (site seconds): their two told figures,
    the headline rule that made the wait each was told (``""``: told before stop 58, not
    kept), the wait, the arrival and the start."""

    wait_s: np.ndarray
    arrival_s: np.ndarray
    start_s: np.ndarray
    rule: np.ndarray

    def key(self) -> tuple[int, float, float]:
        """Equal for the same jobs (a new start or a new job changes it)."""
        if self.arrival_s.size == 0:
            return (0, 0.0, 0.0)
        return (self.arrival_s.size, float(self.start_s.max()), float(self.arrival_s[-1]))

    def as_told_s(self, rule: str) -> np.ndarray:
        """The wait each job was told: its own rule's, ``rule``'s where none was kept."""
        out = self.told_s(rule)
        for kept in set(self.rule.tolist()) - {"", rule}:
            mine = self.rule == kept
            out[mine] = headline_wait(kept, self.history_s[mine], self.queue_s[mine])
        return out


def told_started(site: Site, n: int = REPLAYED) -> ToldStarted:
    """The last ``n`` jobs submitted through ``site`` at their decision (they kept what they
    were told) that have started."""
    figures, rules, a, s = _read_told(site, n, started=True)
    wait = np.maximum(s - a, 0.0)  # a start stamped before the submission: no wait
    return ToldStarted(figures[:, 0], figures[:, 1], wait, a, a + wait, rules)


def _read_told(
    site: Site, n: int, started: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(figures (m, 2), rules, arrival_s, start_s)`` of the last ``n`` told jobs that have
    started (``started``) or are in the batch system and have not (submitted or pending), in
    arrival order (site seconds; ``start_s`` nan for the latter)."""
    jobs = SiteJob.objects.filter(
        site=site, submitted_at__isnull=False, started_at__isnull=not started,
        decision__has_key="told",
    )  # fmt: skip
    if not started:
        jobs = jobs.filter(state__in=(SiteJob.SUBMITTED, SiteJob.PENDING))
    rows = list(
        jobs.order_by("-submitted_at", "-id").values_list(
            "submitted_at", "started_at", "decision__told"
        )[:n]
    )
    told, rules, arrival, start = [], [], [], []
    for submitted, began, body in rows:
        try:
            kept = Told.from_dict(body)
        except (KeyError, TypeError, ValueError):
            continue
        told.append(kept.values()[:2])
        rule = body.get("rule")
        rules.append(rule if isinstance(rule, str) and rule in RULES else "")
        arrival.append(bk.site_seconds(site, submitted))
        start.append(bk.site_seconds(site, began) if began is not None else np.nan)
    a, s = np.array(arrival, dtype=float), np.array(start, dtype=float)
    order = np.argsort(a, kind="stable")
    figures = np.array(told, dtype=float).reshape(-1, 2)[order]
    return figures, np.array(rules, dtype=object)[order], a[order], s[order]


@dataclass(frozen=True)
class ToldWaiting(_Figures):
    """The told jobs in the batch system that have not started, in arrival order (site
    seconds): their two told figures and their arrival. ``P(start within T)`` counts them as
    waiting at least as long as they have so far (``predictor.core.wait.km_within``)."""

    arrival_s: np.ndarray


def told_waiting(site: Site, n: int = REPLAYED) -> ToldWaiting:
    """The last ``n`` jobs submitted through ``site`` at their decision that are in its batch
    system and have not started (submitted or pending)."""
    figures, _, a, _ = _read_told(site, n, started=False)
    return ToldWaiting(figures[:, 0], figures[:, 1], a)


# This process's: site -> (queue view key, its told jobs that started)
_TOLD: LRU[tuple[Hashable, ToldStarted]] = LRU(16)
# and -> (queue view key, its told jobs still waiting)
_WAITING: LRU[tuple[Hashable, ToldWaiting]] = LRU(16)


def told_now(site: Site, view_key: Hashable = None) -> ToldStarted:
    """:func:`told_started` as of the queue view ``view_key`` (``queue_view.QueueView``'s read
    time and token): under the same view the jobs are not read again (None: read now)."""
    return _per_view(_TOLD, site, view_key, told_started)


def waiting_now(site: Site, view_key: Hashable = None) -> ToldWaiting:
    """:func:`told_waiting` as of the queue view ``view_key`` (as :func:`told_now`)."""
    return _per_view(_WAITING, site, view_key, told_waiting)


def _per_view(
    cache: LRU[tuple[Hashable, V]], site: Site, view_key: Hashable, read: Callable[[Site], V]
) -> V:
    held = cache.get(site.pk)
    if held is None or view_key is None or held[0] != view_key:
        held = cache.put(site.pk, (view_key, read(site)))
    return held[1]
