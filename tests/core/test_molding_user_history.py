"""The per-user knowledge of a replay grows only when facts become known."""

from __future__ import annotations

import math

from jobmolding.core.user_history import UserSizeHistory


def test_sizes_and_estimates_are_known_at_submission_runtimes_at_finish() -> None:
    h = UserSizeHistory()
    assert h.sizes(7) == set() and math.isnan(h.max_estimate(7, 4))
    h.submitted(7, 4, 3600.0)
    h.submitted(7, 4, 1800.0)
    h.submitted(7, 8, 600.0)
    assert h.sizes(7) == {4, 8} and h.max_estimate(7, 4) == 3600.0
    assert h.sizes_with_runtimes(7) == set() and h.runtimes(7, 4) == []
    h.finished(7, 4, 1200.0)
    assert h.sizes_with_runtimes(7) == {4} and h.runtimes(7, 4) == [1200.0]
    assert h.sizes(8) == set()
