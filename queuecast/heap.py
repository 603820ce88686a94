"""Keep long-lived objects out of the cyclic garbage collector's full passes.

A full (generation 2) collection visits every container object the process holds: in a web
process holding a fitted bundle one took 113 ms (KTH) and 141 ms (HPC2N), and every request
that process was serving waited for it; with the freeze below, 3.9 and 4.9 ms
(``bench_wait_api``'s "full gc pass", docs/results.md, issue 18, stop 37).
The modules and a fitted bundle live as long as the process (or the bundle's cache slot),
so after a bundle is put in its cache the process collects once and then freezes every
object alive (``gc.freeze``, Python's documented way to move long-lived objects to a
permanent generation no collection visits); full passes then visit only what was created
since. Frozen objects are still freed by reference counting; a bundle dropped from its
cache that sits in a reference cycle is freed at the next :func:`freeze_long_lived` after
:func:`released`, which unfreezes everything before collecting.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_released = False  # something long-lived was dropped since the last freeze


def released() -> None:
    """Say that a long-lived object (a bundle out of its cache) was dropped: the next
    :func:`freeze_long_lived` unfreezes before collecting, so its cycles are freed."""
    global _released
    _released = True


def freeze_long_lived() -> None:
    """Collect, then freeze every object now alive; first unfreeze everything if something
    long-lived was dropped since the last call (:func:`released`)."""
    global _released
    with _lock:
        if _released:
            gc.unfreeze()
            _released = False
        gc.collect()
        gc.freeze()
