"""A small thread-safe LRU of models fitted per stored trace (the prediction APIs)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from django.conf import settings

from queuecast.limits import memory_ceiling
from queuecast.singleflight import SingleFlight
from traces.models import Trace

T = TypeVar("T")


class FittedCache(Generic[T]):
    """Keyed by (id, job count, ingest end), so a re-ingested trace is fitted again."""

    def __init__(self, size: int, fit: Callable[[Trace], T]) -> None:
        self.size = size
        self.fit = fit
        self.items: OrderedDict[tuple, T] = OrderedDict()
        self.lock = threading.Lock()
        self.flights: SingleFlight[T] = SingleFlight()  # one fit per key at a time

    def get(self, trace: Trace) -> T:
        key = (trace.pk, trace.job_count, trace.finished_at)
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        # Outside the lock (fitting is slow); concurrent first calls wait for one fit,
        # which runs under the run memory ceiling (a MemoryError fails the request clearly).
        fitted = self.flights.do(key, lambda: self._fit_within_ceiling(trace))
        with self.lock:
            self.items[key] = fitted
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return fitted

    def _fit_within_ceiling(self, trace: Trace) -> T:
        with memory_ceiling(settings.QUEUECAST_RUN_MEMORY_MB):
            return self.fit(trace)

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
