"""A live site's ``P(start within T)``, read off the jobs it told that have started.

The trace API's rule (``predictor.core.wait.p_within``) on a site's own record: of the last
``p_within.WINDOW`` jobs submitted through the site that have started (``told.told_now``, read
again with the queue), the ``p_within.NEIGHBOURS`` whose told wait (the site's rule now over
their two told figures, as the interval reads them) is nearest the request's on a log scale,
and the share of them that started within T of their submission. Fewer than ``MIN_POOL``
such jobs: no answer, and the reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from holdqueue.services.told import ToldStarted
from predictor.core.wait.local_interval import MIN_POOL
from predictor.core.wait.p_within import NEIGHBOURS, WINDOW, p_within


def told_within(told: ToldStarted, rule: str, wait_s: float, within_s: float) -> dict[str, Any]:
    """``{"within_s", "p", "jobs", "about"}`` for a request told ``wait_s`` under ``rule``
    (``p`` None below ``MIN_POOL`` told jobs started)."""
    if told.wait_s.size < MIN_POOL:
        return {"within_s": float(within_s), "p": None, "jobs": 0,
                "about": f"fewer than {MIN_POOL} jobs told by this site have started"}  # fmt: skip
    said, waited = told.told_s(rule)[-WINDOW:], told.wait_s[-WINDOW:]
    p = float(p_within(np.array([wait_s]), said, waited, within_s)[0])
    jobs = min(NEIGHBOURS, int(waited.size))
    return {"within_s": float(within_s), "p": p, "jobs": jobs,
            "about": f"of the {jobs} jobs told by this site whose told wait was nearest this "
            f"one's (of the last {waited.size} that started), the share that started within "
            "it"}  # fmt: skip
