"""A small thread-safe LRU of models fitted per stored trace (the prediction APIs)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from traces.models import Trace

T = TypeVar("T")


class FittedCache(Generic[T]):
    """Keyed by (id, job count, ingest end), so a re-ingested trace is fitted again."""

    def __init__(self, size: int, fit: Callable[[Trace], T]) -> None:
        self.size = size
        self.fit = fit
        self.items: OrderedDict[tuple, T] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, trace: Trace) -> T:
        key = (trace.pk, trace.job_count, trace.finished_at)
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        fitted = self.fit(trace)  # outside the lock: fitting is slow
        with self.lock:
            self.items[key] = fitted
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return fitted

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
