"""How far off the waits a live site told were, learnt as the jobs it told start.

The accuracy an answer carries from the site's fit (``predict.calibrate``) is scored at each
refit on the last jobs to end, some answered again. Between refits nothing new is learnt.
This is the live check: of the last ``JOBS`` jobs submitted through the site that have
started (``told.told_now``, read again with the queue), the wait each was told (by the
headline rule in force then: ``ToldStarted.as_told_s``) against the wait it had, from
submission to start:

    mae_s = mean |told_j - waited_j|,  median_abs_error_s = median |told_j - waited_j|,
    longer_share = #{waited_j > told_j} / n,  zero_mae_s = mean waited_j

(always answering "no wait" errs by the mean wait). Fewer than ``MIN_POOL`` such jobs: none.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from holdqueue.services.told import ToldStarted
from predictor.core.wait.local_interval import MIN_POOL

JOBS = 200  # as many as the fit scores (``predict.CALIBRATION_JOBS``)


def told_accuracy(told: ToldStarted, rule: str, n: int = JOBS) -> dict[str, Any] | None:
    """The errors of the waits told the last ``n`` told jobs that started (by arrival);
    ``rule``: the site's rule now, for jobs told before the rule was kept. None below
    ``MIN_POOL`` jobs."""
    if told.wait_s.size < MIN_POOL:
        return None
    said = told.as_told_s(rule)[-n:]
    waited = told.wait_s[-n:]
    error = np.abs(said - waited)
    rule_kept = int((told.rule[-n:] != "").sum())
    return {
        "jobs": int(waited.size),
        "mae_s": float(error.mean()),
        "median_abs_error_s": float(np.median(error)),
        "mean_wait_s": float(waited.mean()),
        "zero_mae_s": float(waited.mean()),
        "longer_share": float((waited > said).mean()),
        "about": f"the last {waited.size} jobs submitted through this site that have started: "
        "the wait each was told against the wait it had, from submission to start"
        + ("" if rule_kept == waited.size else
           f" ({waited.size - rule_kept} told before the rule was kept: read by today's)"),
    }  # fmt: skip
