"""A small thread-safe LRU of models fitted per stored trace (the prediction APIs:
``queuecast.kept.KeptModels``), backed by
the cross-process :class:`predictor.services.fitted_store.FittedStore` when one is given.

``get`` fits when nothing is stored (commands, background runs); ``ready`` is the request's
way: it never fits in the request (``predictor.services.background_fit``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from django.conf import settings

from predictor.services.background_fit import (
    CODE_CHANGED_ERROR,
    TIMED_OUT,
    BackgroundFits,
    fit_wait_s,
    fitting,
    inline,
    mark_failed,
    not_ready,
    recent_failure,
    run_in_child,
)
from predictor.services.fitted_store import FittedStore, code_changed
from queuecast.kept import KeptModels
from queuecast.limits import memory_ceiling
from queuecast.singleflight import SingleFlight
from traces.models import Trace

T = TypeVar("T")


def store_key(trace: Trace) -> tuple[str, str]:
    """(id, version) of a trace in the store: its key, and its job count and ingest end."""
    end = trace.finished_at.timestamp() if trace.finished_at else 0
    return str(trace.pk), f"{trace.job_count}_{end:.6f}"


class FittedCache(Generic[T]):
    """Keyed by (id, job count, ingest end), so a re-ingested trace is fitted again.

    With ``store`` (a callable giving the :class:`FittedStore`), a miss first loads the
    bundle another process saved; else one process fits it (the store's per-trace lock;
    the others wait for it and load its file) and saves it for every process.
    """

    def __init__(
        self,
        size: int,
        fit: Callable[[Trace], T],
        store: Callable[[], FittedStore] | None = None,
        kind: str = "trace",
        child_args: Callable[[Trace], list[str]] | None = None,
    ) -> None:
        self.fit = fit
        self.store, self.kind = store, kind
        self.child_args = child_args  # ``manage.py`` arguments of the fit in a child process
        self.kept: KeptModels[T] = KeptModels(size)
        self.flights: SingleFlight[T] = SingleFlight()  # one fit per key at a time
        self.background = BackgroundFits()

    def get(self, trace: Trace) -> T:
        """The fitted model, fitted here if no process has stored it (blocking)."""
        key = (trace.pk, trace.job_count, trace.finished_at)
        held = self.kept.get(key)
        if held is not None:
            return held
        # Outside the lock (fitting is slow); concurrent first calls wait for one fit,
        # which runs under the run memory ceiling (a MemoryError fails the request clearly).
        fitted = self.flights.do(key, lambda: self._load_or_fit(trace))
        self.kept.put(key, fitted)
        return fitted

    def ready(self, trace: Trace) -> T:
        """The fitted model if this process holds it or the store has it; else its fit starts
        in the background (unless a process is fitting it), this call waits for it at most
        ``QUEUECAST_FIT_WAIT_S`` if it started it, and raises ``ModelNotReady`` (503)."""
        key = (trace.pk, trace.job_count, trace.finished_at)
        held = self.kept.get(key)
        if held is not None or self.store is None:
            return held if held is not None else self.get(trace)
        store = self.store()
        ident, version = store_key(trace)
        fitted = store.load(self.kind, ident, version)
        if fitted is not None:
            self.kept.put(key, fitted)
            return fitted
        label = f"trace {trace.name!r}"
        if recent_failure(store, self.kind, ident, version) is None:
            done, started = self.background.start(
                key, lambda: self._fit_in_background(trace, key), f"fit-{self.kind}-{ident}"
            )
            if started:
                done.wait(fit_wait_s())
            held = self.kept.get(key)
            if held is not None:
                return held
        raise not_ready(store, self.kind, ident, label)

    def _fit_in_background(self, trace: Trace, key: tuple) -> None:
        """Fit and store (in a child process when ``child_args`` is given and the database is
        shared, :mod:`predictor.services.background_fit`), then hold what was stored."""
        if self.child_args is not None and not inline():
            code = run_in_child(self.child_args(trace))
            assert self.store is not None
            store, (ident, version) = self.store(), store_key(trace)
            fitted = store.load(self.kind, ident, version)
            if code == TIMED_OUT and fitted is None:  # killed mid-fit (not while warming)
                limit = settings.QUEUECAST_RUN_TIME_LIMIT_S
                mark_failed(store, self.kind, ident, version, f"time limit reached ({limit} s)")
            if fitted is None and code_changed():  # never started, or stored for the new code
                mark_failed(store, self.kind, ident, version, CODE_CHANGED_ERROR)
        else:
            fitted = self.fit_and_store(trace)
        if fitted is not None:
            self.kept.put(key, fitted)

    def fit_and_store(self, trace: Trace) -> T | None:
        """Fit and store unless another process holds the lock (it is fitting: None)."""
        assert self.store is not None
        store = self.store()
        ident, version = store_key(trace)
        with store.lock(self.kind, ident, blocking=False) as got:
            if not got:
                return None
            fitted = store.load(self.kind, ident, version)  # stored while we looked
            if fitted is None:
                with fitting(store, self.kind, ident, version):
                    fitted = self._fit_within_ceiling(trace)
                    store.save(self.kind, ident, version, fitted)
        return fitted

    def _load_or_fit(self, trace: Trace) -> T:
        if self.store is None:
            return self._fit_within_ceiling(trace)
        store = self.store()
        ident, version = store_key(trace)
        fitted = store.load(self.kind, ident, version)
        if fitted is not None:
            return fitted
        with store.lock(self.kind, ident):  # single flight across processes
            fitted = store.load(self.kind, ident, version)  # fitted while we waited
            if fitted is None:
                with fitting(store, self.kind, ident, version):  # what other processes report
                    fitted = self._fit_within_ceiling(trace)
                    store.save(self.kind, ident, version, fitted)
        return fitted

    def _fit_within_ceiling(self, trace: Trace) -> T:
        with memory_ceiling(settings.QUEUECAST_RUN_MEMORY_MB):
            return self.fit(trace)

    def clear(self) -> None:
        self.kept.clear()
