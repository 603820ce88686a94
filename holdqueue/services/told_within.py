"""A live site's ``P(start within T)``, read off the jobs it told.

The trace API's neighbours (``predictor.core.wait.p_within``) on a site's own record: of the
last ``p_within.WINDOW`` jobs submitted through the site, started or still waiting
(``told.told_now``, ``told.waiting_now``, read again with the queue), the
``p_within.NEIGHBOURS`` whose told wait (the site's rule now over their two told figures, as
the interval reads them) is nearest the request's on a log scale. Since stop 61 the chance is
their Kaplan-Meier estimate (``predictor.core.wait.km_within``): a job still waiting counts as
waiting at least as long as it has so far. Stop 58 read the share of the started ones alone,
and the first told jobs to start are the short waits: on new sites cut from the three tuning
parts (``benchmarks/interval_small_pool.py``), while 30-99 of their jobs had started, that
share said 0.57-0.93 where 0.41-0.84 started within T (T = 10 min, 1 h, 4 h); counting the
waiting it said within 0.02 of what happened, with a lower Brier score in every band, T and
log. Fewer than ``MIN_POOL`` told jobs started: no answer, and the reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from holdqueue.services.told import ToldStarted, ToldWaiting
from predictor.core.wait.km_within import p_within_censored
from predictor.core.wait.local_interval import MIN_POOL
from predictor.core.wait.p_within import NEIGHBOURS, WINDOW


def told_within(
    told: ToldStarted, waiting: ToldWaiting, rule: str, wait_s: float, within_s: float,
    now_s: float,
) -> dict[str, Any]:  # fmt: skip
    """``{"within_s", "p", "jobs", "waiting", "about"}`` for a request told ``wait_s`` under
    ``rule`` at ``now_s`` (site seconds; ``p`` None below ``MIN_POOL`` told jobs started)."""
    if told.wait_s.size < MIN_POOL:
        return {"within_s": float(within_s), "p": None, "jobs": 0, "waiting": 0,
                "about": f"fewer than {MIN_POOL} jobs told by this site have started"}  # fmt: skip
    arrival = np.concatenate([told.arrival_s, waiting.arrival_s])
    said = np.concatenate([told.told_s(rule), waiting.told_s(rule)])
    waited = np.concatenate([told.wait_s, np.maximum(now_s - waiting.arrival_s, 0.0)])
    started = np.arange(arrival.size) < told.wait_s.size  # the started come first
    last = np.argsort(arrival, kind="stable")[-WINDOW:]
    p = float(p_within_censored(np.array([wait_s]), said[last], waited[last], started[last],
                                within_s)[0])  # fmt: skip
    jobs = min(NEIGHBOURS, int(last.size))
    still = int((~started[last]).sum())
    return {"within_s": float(within_s), "p": p, "jobs": jobs, "waiting": still,
            "about": f"of the {jobs} jobs told by this site whose told wait was nearest this "
            f"one's (of the last {last.size} submitted: {last.size - still} started, {still} "
            "still waiting, each counted as waiting at least as long as it has so far), the "
            "chance to start within it (Kaplan-Meier)"}  # fmt: skip
