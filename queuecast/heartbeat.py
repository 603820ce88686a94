"""Worker identity, process liveness and the heartbeat thread of running leases.

A lease names its worker as ``host:pid:start`` (``start`` is the process start time
from ``/proc``, so a recycled pid is not mistaken for the dead worker). A lease is
dead when its heartbeat is older than ``QUEUECAST_RUN_STALE_S`` (any host), or at
once when its worker ran on this host and that process is gone.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from queuecast.slot_wait import pid_exists  # stdlib-only module: the run waiter's own check

logger = logging.getLogger(__name__)
HOST = socket.gethostname()


def process_start(pid: int) -> str:
    """The start time of ``pid`` in clock ticks since boot ('' if unknown or gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()
    except (OSError, IndexError):
        return ""


def worker_id(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{HOST}:{pid}:{process_start(pid)}"


def process_gone(worker: str) -> bool:
    """True only when ``worker`` ran on this host and its process no longer exists."""
    parts = worker.rsplit(":", 2)
    if len(parts) != 3:
        return False
    host, pid_text, start = parts
    if host != HOST or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if not pid_exists(pid):
        return True
    now_start = process_start(pid)
    return bool(start and now_start and now_start != start) or _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def stale_s() -> float:
    return float(settings.QUEUECAST_RUN_STALE_S)


def lease_dead_reason(worker: str, heartbeat_at: datetime, now: datetime) -> str | None:
    """Why a lease's worker counts as dead, or None while it is alive."""
    age = (now - heartbeat_at).total_seconds()
    if age > stale_s():
        return (
            f"worker {worker} lost: no heartbeat for {age:.0f} s "
            f"(limit QUEUECAST_RUN_STALE_S={stale_s():.0f} s)"
        )
    if process_gone(worker):
        return f"worker {worker} lost: its process is gone"
    return None


class Beater:
    """One daemon thread per process refreshing ``heartbeat_at`` of this process's leases."""

    def __init__(self) -> None:
        self.tokens: set[str] = set()
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None
        self.pid = os.getpid()

    def add(self, token: str) -> None:
        with self.lock:
            if self.pid != os.getpid():  # forked: the parent's thread did not come along
                self.thread, self.tokens, self.pid = None, set(), os.getpid()
            self.tokens.add(token)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._loop, name="lease-heartbeat")
                self.thread.daemon = True
                self.thread.start()

    def remove(self, token: str) -> None:
        with self.lock:
            self.tokens.discard(token)

    def _loop(self) -> None:
        while True:
            self.wake.wait(float(settings.QUEUECAST_RUN_HEARTBEAT_S))
            self.wake.clear()
            with self.lock:
                tokens = set(self.tokens)
            if tokens:
                close_old_connections()
                try:
                    self._beat(tokens)
                finally:  # this thread's own connection; never a caller's (tests call _beat)
                    connection.close()

    def _beat(self, tokens: set[str]) -> None:
        from queuecast.models import RunLease

        try:
            leases = RunLease.objects.filter(token__in=tokens)
            leases.update(heartbeat_at=timezone.now())
            alive = set(leases.values_list("token", flat=True))
            with self.lock:  # a lease taken over or rolled back is no longer ours
                self.tokens -= tokens - alive
        except Exception as exc:  # a database blip: the next beat tries again
            logger.warning("lease heartbeat failed: %s: %s", type(exc).__name__, exc)


BEATER = Beater()


def stale_before(now: datetime) -> datetime:
    return now - timedelta(seconds=stale_s())
