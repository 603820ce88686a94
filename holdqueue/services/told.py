"""What a site told the jobs submitted through it, read back at a fit (``jobmolding.core.told``).

A job submitted at its decision keeps, in its decision record, the answer the site gave for
the size it was submitted with (``record["told"]``, :func:`told_record`). When the job has
ended and its history row (``SiteHistory``, keyed by the batch system's id) is among the
last finished jobs a fit scores, that answer is scored instead of answering the job again
(``headline_scores.pooled_answers``). Jobs the site did not submit, or held, have none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from holdqueue.models import SiteHistory, SiteJob
from jobmolding.core.told import Told, ToldRows


def told_record(predictor: Any, at_s: float, procs: int) -> dict[str, Any]:
    """``{"told": ...}`` for a decision record: what ``predictor`` (the site's ``LiveBundle``)
    told a request of ``procs`` processors on the snapshot of ``at_s``; empty when it told
    none (a stubbed predictor)."""
    told_for = getattr(predictor, "told_for", None)
    told = told_for(at_s, procs) if told_for is not None else None
    return {} if not isinstance(told, Told) else {"told": told.as_dict()}


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
