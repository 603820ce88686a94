"""The process's one thread-pool controller (``threadpoolctl``).

``threadpool_limits(1)`` builds a new controller per call, which scans the loaded libraries
(``/proc/self/maps``): a few ms per prediction, 21 % of a warm API wait answer with the
``choose`` runtime method (docs/results.md, "Speed", third round). Made once, its ``limit``
sets the same limits.
"""

from __future__ import annotations

from functools import cache

from threadpoolctl import ThreadpoolController


@cache
def threads() -> ThreadpoolController:
    """The process's thread-pool controller, made once."""
    return ThreadpoolController()
