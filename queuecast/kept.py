"""A process's long-lived models, bounded: least recently used out, held out of the
collector's full passes.

One class for the two caches that hold fitted models for as long as the process lives (the
trace bundles, ``predictor.services.fitted_cache``; the site models,
``holdqueue.services.predict``). Putting a model new to the process freezes what is alive
(``queuecast.heap.freeze_long_lived``); dropping one (evicted past ``size``, popped, cleared
or replaced by another) marks a release (``queuecast.heap.released``), so the next freeze
unfreezes first and a dropped model in a reference cycle is freed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from queuecast import heap

V = TypeVar("V")


def _is(a: object, b: object) -> bool:
    return a is b


class KeptModels(Generic[V]):
    """At most ``size`` values by key, thread-safe.

    ``same(before, after)`` says whether a value put under a key already held is the same
    model counted again (e.g. a site model with a new timestamp): then nothing is released
    or frozen. By default only the very same object is.
    """

    def __init__(self, size: int, same: Callable[[V, V], bool] = _is) -> None:
        self.size, self.same = size, same
        self.items: OrderedDict[Hashable, V] = OrderedDict()
        self.lock = threading.Lock()

    def __contains__(self, key: Hashable) -> bool:
        with self.lock:
            return key in self.items

    def __len__(self) -> int:
        with self.lock:
            return len(self.items)

    def get(self, key: Hashable) -> V | None:
        """The value held under ``key`` (now the most recently used), or None."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
            return self.items.get(key)

    def put(self, key: Hashable, value: V) -> None:
        """Hold ``value`` (dropping the least recently used past ``size``); a model new to
        the process is then kept out of the collector's full passes."""
        with self.lock:
            before = self.items.get(key)
            new = before is None or not self.same(before, value)
            if before is not None and new:
                heap.released()
            del before  # else the collection below would find the replaced model still alive
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)
                heap.released()
        if new:
            heap.freeze_long_lived()

    def pop(self, key: Hashable, default: V | None = None) -> V | None:
        with self.lock:
            if key in self.items:
                heap.released()
            return self.items.pop(key, default)

    def clear(self) -> None:
        with self.lock:
            if self.items:
                heap.released()
            self.items.clear()
