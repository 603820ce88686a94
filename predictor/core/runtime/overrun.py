"""How far past its requested time a job can still run: the log's grace, from its tuning part.

The seed clips every rangeSet to ``[1 s, requested time]``: "a job is killed at its requested
time". Schedulers kill a job some time *after* its limit, so on some logs a share of the jobs
runs past it (tuning parts: CTC-SP2 9.2% of the jobs with a requested time, HPC2N 11.0%,
SDSC-SP2 6.2%, KTH-SP2 1.5%; by a median of 30-53 s on the first three, docs/results.md).
Under the clip each of those jobs is a certain miss. ``overrun_grace`` is a percentile of
``runtime - requested time`` over the tuning part's jobs that ran past their request (0 when
none did): the clip moves to ``requested time + grace``, and the density decides, as
everywhere else, whether any length is spent there. ``DensityRangeSet`` asks for the median,
the typical kill delay (its ``grace_quantile``); the 99th percentile, this function's default,
took a few hours-long overruns on KTH-SP2 for a 5 h grace (docs/results.md, "Seventh and
eighth runtime passes").
"""

from __future__ import annotations

import numpy as np

#: the percentile of the overruns taken as the grace (module docstring; ``DensityRangeSet``'s
#: ``grace_quantile``)
GRACE_QUANTILE = 99.0


def overrun_grace(
    run_s: np.ndarray, req_time_s: np.ndarray, n_tune: int, q: float = GRACE_QUANTILE
) -> float:
    """The grace in seconds from the first ``n_tune`` rows (module docstring): the ``q``-th
    percentile of the overruns; arrays (N,) in log order, requested time <= 0 meaning
    unknown."""
    run = np.asarray(run_s, dtype=float)[:n_tune]
    req = np.asarray(req_time_s, dtype=float)[:n_tune]
    over = (req > 0) & (run > req)
    if not over.any():
        return 0.0
    return float(np.percentile(run[over] - req[over], q))
