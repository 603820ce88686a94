"""First fits that never run inside a request.

A trace's or site's first fit takes seconds to minutes (``auto`` fits twelve experts: 90 s at
load on KTH, docs/results.md "Speed"), longer than gunicorn's 60 s request timeout. So when
no fitted model exists in the process or in the store (``predictor.services.fitted_store``),
a request starts the fit in a background thread of its process and waits at most
``QUEUECAST_FIT_WAIT_S`` (5 s: a small log's fit answers in one go). Until the model is
stored every request answers at once with :class:`ModelNotReady`: 503, a ``Retry-After``
header and a body saying the model is being fitted, since when and by which process (or that
the last fit failed, with its error). No other method answers in its place.

Single flight across processes: the background fit takes the store's (kind, id) lock without
waiting; when another process (another web worker, ``manage.py warm_predictions`` run by
``scripts/serve`` at start-up) holds it, the fit ends at once and the answer is that
process's status. Within a process one background fit per key runs at a time
(:class:`BackgroundFits`).

In a child process. A fit in a thread of a web worker held the GIL in long numpy and pandas
calls: the worker answered 25 requests in the 244 s of a fit (docs/results.md, issue 18). So
the thread only starts ``manage.py fit_model ...`` (niced, :func:`run_in_child`) and waits for
it; the child takes the lock, writes the status file, fits and stores, and the thread then
loads the stored model. Only when :func:`inline` (the test suite's database, which a child
cannot see) does the fit run in the thread itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from predictor.services import fitted_store
from predictor.services.fitted_store import FittedStore, default_store
from queuecast.background import same_database_env
from queuecast.errors import ServiceUnavailable

LOG = logging.getLogger(__name__)
RETRY_AFTER_S = 10  # while fitting: a fit takes tens of seconds at least
FAILED_RETRY_S = 300  # a failed fit is tried again by the first request after this


class ModelNotReady(ServiceUnavailable):
    """503: the model that answers is not fitted yet (or its last fit failed). Expected while
    a model is fitted: logged at INFO, not as a server error."""

    expected = True


def fit_wait_s() -> float:
    return float(getattr(settings, "QUEUECAST_FIT_WAIT_S", 5))


def inline() -> bool:
    """Background work runs in place when no other thread may read the request's rows: an
    in-memory SQLite database, or inside a transaction (the test suite's)."""
    in_memory = connection.vendor == "sqlite" and connection.is_in_memory_db()
    return in_memory or connection.in_atomic_block


def spawn(work: Callable[[], None], name: str) -> None:
    """Run ``work`` in a daemon thread (in place when :func:`inline`); a seam for tests."""
    if inline():
        work()
        return

    def run() -> None:
        try:
            work()
        finally:
            connection.close()  # the thread's own database connection

    threading.Thread(target=run, name=name, daemon=True).start()


CHILD_NICE = 10  # the fit yields to the web workers' requests


def child_env() -> dict[str, str]:
    """The environment of a fit's child: this process's, with the database and the fitted
    store this process uses (a test run's database and store differ from the settings'
    defaults, as with ``queuecast.background``)."""
    return {**same_database_env(), "QUEUECAST_FITTED_DIR": str(default_store().dir)}


TIMED_OUT = -1  # :func:`run_in_child`'s code for a child killed at its time limit
CODE_CHANGED = -2  # :func:`run_in_child`'s code when no child started: the code on disk changed
CODE_CHANGED_ERROR = (
    "the code on disk changed since this process started: a fit now would be stored for the "
    "new code, which this process never loads; restart the process (a deploy restarts it)"
)


def run_in_child(args: list[str], time_limit_s: float | None = None) -> int:
    """Run ``manage.py <args>`` in a niced child process and wait for it; its exit code (a
    seam for tests). Waiting holds no GIL: the worker's other threads keep answering. A
    child still running after ``time_limit_s`` (default ``QUEUECAST_RUN_TIME_LIMIT_S``, the
    long runs' ceiling) is killed: :data:`TIMED_OUT`.

    No child starts when the source on disk is no longer the one this process runs
    (:func:`predictor.services.fitted_store.code_changed`: :data:`CODE_CHANGED`). The child
    would store its model under the new code's tag, this process would never find it, and
    its next request would start the same fit again (a 15-minute HPC2N fit, over and over,
    in a process left running across a code change)."""
    if fitted_store.code_changed():
        LOG.error("no fit in a child (%s): %s", " ".join(args), CODE_CHANGED_ERROR)
        return CODE_CHANGED
    command = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), *args]
    if shutil.which("nice"):
        command = ["nice", "-n", str(CHILD_NICE), *command]
    limit = float(time_limit_s or settings.QUEUECAST_RUN_TIME_LIMIT_S)
    try:
        done = subprocess.run(command, check=False, stdout=subprocess.DEVNULL, env=child_env(),
                              stderr=subprocess.PIPE, text=True, timeout=limit)  # fmt: skip
    except subprocess.TimeoutExpired:  # ``run`` killed the child and waited for it
        LOG.warning("fit in a child (%s) killed at its time limit of %.0f s", " ".join(args), limit)
        return TIMED_OUT
    if done.returncode:
        LOG.warning("fit in a child (%s) ended with %s: %s", " ".join(args), done.returncode,
                    done.stderr[-2000:])  # fmt: skip
    return done.returncode


class BackgroundFits:
    """This process's background fits: at most one per key; ``start`` gives its done event."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: dict[Any, threading.Event] = {}

    def start(self, key: Any, work: Callable[[], None], name: str) -> tuple[threading.Event, bool]:
        """(done event, whether this call started it)."""
        with self.lock:
            if key in self.running:
                return self.running[key], False
            done = self.running[key] = threading.Event()

        def run() -> None:
            try:
                work()
            except Exception:  # the status file says it failed; the next request says so
                LOG.exception("background fit %s failed", name)
            finally:
                with self.lock:
                    self.running.pop(key, None)
                done.set()

        spawn(run, name)
        return done, True


@contextlib.contextmanager
def fitting(store: FittedStore, kind: str, ident: str, version: str = "") -> Iterator[None]:
    """Around a fit under the store's lock: its status is ``fitting`` (since when, which
    process) while it runs, ``failed`` (with the error) if it raises, gone once stored."""
    store.write_status(kind, ident, {"state": "fitting", "version": version,
                                     "started_at": time.time(), "pid": os.getpid()})  # fmt: skip
    try:
        yield
    except Exception as exc:
        mark_failed(store, kind, ident, version, f"{type(exc).__name__}: {exc}")
        raise
    store.clear_status(kind, ident)


def mark_failed(store: FittedStore, kind: str, ident: str, version: str, error: str) -> None:
    """This version's fit failed with ``error``: requests say so, and the first one after
    ``FAILED_RETRY_S`` tries again."""
    store.write_status(kind, ident, {"state": "failed", "version": version, "at": time.time(),
                                     "error": error})  # fmt: skip


def recent_failure(store: FittedStore, kind: str, ident: str, version: str = "") -> dict | None:
    """The status of this version's last fit if it failed less than ``FAILED_RETRY_S`` ago."""
    status = store.read_status(kind, ident)
    if not status or status.get("state") != "failed" or status.get("version", "") != version:
        return None
    return status if time.time() - float(status.get("at", 0)) < FAILED_RETRY_S else None


def not_ready(store: FittedStore, kind: str, ident: str, label: str) -> ModelNotReady:
    """The 503 of a model not stored yet, from its fit's status."""
    status = store.read_status(kind, ident) or {}
    now = time.time()
    if status.get("state") == "failed":
        retry = max(1, round(FAILED_RETRY_S - (now - float(status.get("at", now)))))
        return ModelNotReady(
            f"fitting the model of {label} failed ({status.get('error')}); it is tried again "
            f"in {retry} s",
            status="failed", error=status.get("error"), retry_after_s=retry,
        )  # fmt: skip
    started = status.get("started_at")
    elapsed = None if started is None else round(now - float(started), 1)
    since = "" if elapsed is None else f" (started {elapsed:.0f} s ago)"
    return ModelNotReady(
        f"the model of {label} is being fitted{since}; no prediction until it is stored. "
        f"Retry in {RETRY_AFTER_S} s",
        status="fitting", started_at=started, elapsed_s=elapsed, fitting_pid=status.get("pid"),
        retry_after_s=RETRY_AFTER_S,
    )  # fmt: skip
