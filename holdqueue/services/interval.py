"""A live site's wait interval, learnt as the jobs it told start.

Until now the interval came from the pool a fit scored: the last ``CALIBRATION_JOBS`` jobs
to end, at each refit (every 10% of history growth or hour). Between fits nothing was learnt,
and the pool's quantile under-covered: on the shared logs the stated 90% held for 87% of KTH-SP2's
and 85% of SDSC-SP2's test jobs (docs/results.md, stop 54).

Now the interval is the online rule of the trace path and its evaluations, fed by every job
the site told and saw start: each job answered through the site keeps what it was told
(``holdqueue.services.told``), and its wait is known once it starts. The rule
(``predictor.core.wait.local_interval``, since stop 59; stop 57's pooled the errors of all of
them) reads the errors (wait minus told wait) of the 200 of the last 2,000 told jobs that
started whose told wait was nearest the request's, shifted by the request's told wait (stop 59
read their waits), at a level corrected by the misses of those jobs' own intervals
(Gibbs & Candes 2021; the state at the request's instant, the last ``REPLAYED`` told jobs
replayed). Each job is told the wait the site's current rule makes of its two told figures,
as the fit's pool scores them.

A site with fewer than ``TOLD_FROM`` told jobs started (a new site, or one whose jobs are
submitted elsewhere) answers with the fit's pool, and says so. The first of a site's told jobs
to start are those that waited least, so a pool of a few of them is short of long waits: on
new sites cut from the three tuning parts (``benchmarks/interval_small_pool.py``, stop 61) the
rule read from 30 told jobs covered 0.63-0.76 at 90% while fewer than 100 had started, where
the fit's pool (the last jobs to *end*, long waits in it) covered 0.82-0.87 with a lower
interval score; 100 gave a lower score than 30 on every tuning part at 90% and 95% (within 1%
at 80%), 200 a higher one on SDSC-SP2's. The rule's level is corrected from its 30th told job
on all the same (``local_interval.MIN_POOL``), so it starts with the misses it would have had.

The state is computed once per site, rule and level while the told jobs are unchanged (a
process re-reads them when it re-reads the queue, ``queue_view``), so a request reads it in
microseconds.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from holdqueue.models import Site
from holdqueue.services.told import told_now
from predictor.core.lru import LRU
from predictor.core.wait.intervals import interval_from_pool
from predictor.core.wait.local_interval import TOLD_FROM, LocalNow, level_words, local_now

# This process's: (site, rule, level) -> (told key, state)
_STATES: LRU[tuple[tuple[int, float, float], LocalNow | None]] = LRU(64)


def adaptive_state(
    site: Site, rule: str, level: float, view_key: Hashable = None
) -> LocalNow | None:
    """The online rule's state for ``site`` now, every told job that started known (None:
    fewer than ``TOLD_FROM`` did). ``view_key`` names the queue view the request reads
    (``queue_view.QueueView``): under the same view the told jobs are not read again, and
    while they are the same the state is not computed again."""
    told = told_now(site, view_key)
    if told.wait_s.size < TOLD_FROM:
        return None
    key = (site.pk, rule, float(level))
    held = _STATES.get(key)
    if held is not None and held[0] == told.key():
        return held[1]
    now_s = float(told.start_s.max(initial=0.0))  # every start read so far is known
    state = local_now(told.told_s(rule), told.wait_s, told.arrival_s, told.start_s, now_s,
                      level)  # fmt: skip
    _STATES.put(key, (told.key(), state))
    return state


def wait_interval(
    site: Site, rule: str, fit_pool: np.ndarray, wait_s: float, level: float,
    view_key: Hashable = None,
) -> tuple[float, float, dict[str, Any]]:  # fmt: skip
    """``(low_s, high_s, how)`` of a wait told now: the local rule over the told jobs that
    started, or the fit's pool while fewer than ``TOLD_FROM`` did."""
    state = adaptive_state(site, rule, level, view_key)
    if state is None:
        low, high = interval_from_pool(np.array([wait_s]), fit_pool, level)
        how = {
            "from": "fit",
            "jobs": int(np.size(fit_pool)),
            "about": f"the errors of the last {np.size(fit_pool)} finished jobs scored at "
            f"the last fit (fewer than {TOLD_FROM} jobs told by this site have started)",
        }
        return float(low[0]), float(high[0]), how  # fmt: skip
    low, high = state.interval(np.array([wait_s]))
    near = min(state.k, state.pred_s.size)
    which = (
        f"the {near} jobs told a wait nearest this one, of the last {state.pred_s.size} of "
        f"{state.known} jobs told by this site that have started"
        if near < state.pred_s.size
        else f"all {near} jobs told by this site that have started (fewer than {state.k}: "
        "the nearest are all of them)"
    )
    how = {"from": "told", "jobs": state.known, "level_used": state.target, "neighbours": near,
           "about": f"the errors of {which}, {level_words(state.target, level)}"}  # fmt: skip
    return float(low[0]), float(high[0]), how
