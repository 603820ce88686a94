"""Single flight: concurrent calls for one key run the work once; the others wait for it.

Used around model fitting (``predictor.services.fitted_cache``): two first predictions on one trace
fit it once, the second request waiting for the first's result (or its error) instead of
fitting again beside it. Per process: each web worker process fits its own copy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class _Flight:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class SingleFlight(Generic[T]):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[Hashable, _Flight] = {}
        self.runs = 0  # how many times work actually ran (tests, diagnostics)

    def do(self, key: Hashable, work: Callable[[], T]) -> T:
        """``work()`` once for all callers that arrive while it runs for ``key``."""
        with self._lock:
            flight = self._flights.get(key)
            leader = flight is None
            if leader:
                flight = self._flights[key] = _Flight()
                self.runs += 1
        assert flight is not None
        if not leader:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return flight.value
        try:
            flight.value = work()
        except BaseException as exc:
            flight.error = exc
            raise
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()
        return flight.value
