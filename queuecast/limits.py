"""Ceilings on one long run: memory (address space) and wall time, failing with a reason.

Memory: while a run's body executes, the process may grow its address space by at most
``QUEUECAST_RUN_MEMORY_MB`` (``RLIMIT_AS`` = the size at the start + the ceiling); an
allocation past it raises ``MemoryError`` inside the run, which the lifecycle records as
the row's failure. Time: the run's progress callback checks a deadline
(``QUEUECAST_RUN_TIME_LIMIT_S``); in broker mode Celery's soft time limit backs it up for
a body that stops reporting progress.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from queuecast.errors import QueuecastError

try:
    import resource
except ImportError:  # not on Linux/macOS: no ceiling, said in docs/operations.md
    resource = None  # type: ignore[assignment]

_CEILING = threading.Lock()


class RunLimitExceeded(QueuecastError):
    """A run went past its memory ceiling or its time limit (a request: HTTP 503)."""

    status_code = 503


def address_space_bytes() -> int:
    """This process's virtual size (``/proc/self/statm``), 0 where unknown."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * (resource.getpagesize() if resource else 4096)


@contextmanager
def memory_ceiling(mb: int | None) -> Iterator[None]:
    """Allow the body at most ``mb`` MB more address space; MemoryError -> RunLimitExceeded.

    One ceiling at a time per process (a nested or concurrent run runs under the outer
    one): the limit is process-wide.
    """
    base = address_space_bytes()
    if not mb or resource is None or base == 0 or not _CEILING.acquire(blocking=False):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = base + mb * 2**20
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        try:
            yield
        except MemoryError as exc:
            raise RunLimitExceeded(
                f"memory ceiling reached: the run needed more than {mb} MB "
                "(QUEUECAST_RUN_MEMORY_MB)"
            ) from exc
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        _CEILING.release()


class Deadline:
    """Wall-clock limit of a run, checked where the run reports progress."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.started = time.monotonic()

    def check(self) -> None:
        if self.seconds and time.monotonic() - self.started > self.seconds:
            raise RunLimitExceeded(
                f"time limit reached: the run took more than {self.seconds:.0f} s "
                "(QUEUECAST_RUN_TIME_LIMIT_S)"
            )
