"""The embedded mode's sweeper (``manage.py sweep_holdqueue --loop``): the steps of
``services/sweep.py``, each job and each site a task in a thread pool.

A pass only *dispatches*: it never waits for a release, a lookup or a sync to finish, so one
``sbatch`` that hangs for its whole timeout holds one thread and delays nothing else (the
serial loop held every release behind it). A site has at most ``per_site`` tasks in flight,
so a site whose batch system hangs cannot take every thread either; a job or site already
in flight is not dispatched again. Exactly-once release still rests on the row lock
(``jobs.claim_release``), not on this bookkeeping.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import close_old_connections, connection

from holdqueue.models import SiteJob
from holdqueue.services.conf import setting
from holdqueue.services.eta import queue_upcoming
from holdqueue.services.jobs import release_job
from holdqueue.services.sweep import (
    check_sites,
    due_ids,
    reconcile_one,
    sites_to_sync,
    stale_ids,
    sync_one,
)

log = logging.getLogger(__name__)


def site_of(job_ids: list[int]) -> list[tuple[int, int]]:
    """``(job id, site id)`` for each job, in the order given."""
    sites = dict(SiteJob.objects.filter(pk__in=job_ids).values_list("id", "site_id"))
    return [(pk, sites[pk]) for pk in job_ids if pk in sites]


class Sweeper:
    """Dispatches each pass's work to ``threads`` threads (see the module docstring)."""

    def __init__(self, threads: int = 4, per_site: int = 2) -> None:
        self.pool = ThreadPoolExecutor(max(threads, 1), thread_name_prefix="qc-sweep")
        self.per_site = max(per_site, 1)
        self.lock = threading.Lock()
        self.busy: set[tuple[str, int]] = set()
        self.site_load: Counter[int] = Counter()

    def dispatch(self, key: tuple[str, int], site_id: int, fn: Callable, *args: Any) -> bool:
        """Run ``fn(*args)`` in the pool unless ``key`` is in flight or its site is full."""
        with self.lock:
            if key in self.busy or self.site_load[site_id] >= self.per_site:
                return False
            self.busy.add(key)
            self.site_load[site_id] += 1
        self.pool.submit(self._run, key, site_id, fn, *args)
        return True

    def _run(self, key: tuple[str, int], site_id: int, fn: Callable, *args: Any) -> None:
        close_old_connections()
        try:
            fn(*args)
        except Exception:  # logged; the next pass retries
            log.exception("hold-queue sweep: %s %s failed", *key)
        finally:
            connection.close()  # this thread's own connection
            with self.lock:
                self.busy.discard(key)
                self.site_load[site_id] -= 1

    def pass_once(self) -> dict[str, int]:
        """Dispatch one pass: returns how many tasks of each kind went to the pool."""
        check_sites()
        queue_upcoming()
        sent: Counter[str] = Counter()
        for pk, site_id in site_of(due_ids()):
            sent["release"] += self.dispatch(("release", pk), site_id, release_job, pk)
        for pk, site_id in site_of(stale_ids()):
            sent["lookup"] += self.dispatch(("lookup", pk), site_id, reconcile_one, pk)
        for site in sites_to_sync(setting("QUEUECAST_SITE_SYNC_S", 60)):
            sent["sync"] += self.dispatch(("sync", site.pk), site.pk, sync_one, site)
        return dict(sent)

    def run(self, every_s: float, stop: Callable[[], bool] | None = None) -> None:
        """A pass every ``every_s`` seconds until ``stop()`` is true."""
        try:
            while stop is None or not stop():
                started = time.monotonic()
                try:
                    self.pass_once()
                except Exception:  # the loop must outlive one bad pass
                    log.exception("hold-queue sweep pass failed")
                time.sleep(max(every_s - (time.monotonic() - started), 0.1))
        finally:
            self.close()

    def close(self, wait: bool = False) -> None:
        self.pool.shutdown(wait=wait, cancel_futures=True)

    def idle(self, timeout_s: float = 30.0) -> bool:
        """Wait until nothing is in flight (tests); True if it got there."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if not self.busy:
                    return True
            time.sleep(0.02)
        return False


def sweep_forever(every_s: float, stop: Callable[[], bool] | None = None) -> None:
    """The embedded mode's loop: a :class:`Sweeper` pass every ``every_s`` seconds."""
    Sweeper(setting("QUEUECAST_SWEEP_THREADS", 4)).run(every_s, stop)  # pragma: no cover
