"""A small least-recently-used store, thread-safe, bounded by a count and by bytes: the one
copy of the bookkeeping behind the caches that keep what an instant, a queue or a history
gives (APQ's instant columns, ``auto``'s plans, recent errors, the forward runs, settled
runtime answers, molding's fits, a process's fitted evaluation methods, sites' history
frames).

A value put under a key already held replaces it. Past either bound the least recently used
entries are dropped, but never the last one: an entry larger than ``max_bytes`` is kept
alone until the next put. ``get`` and ``get_many`` count hits and misses (``hits``,
``misses``); ``bytes`` is the sum of the sizes given to ``put``. Models kept for the life of
a process, held out of the collector's passes, have their own store
(``queuecast.kept.KeptModels``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")
S = TypeVar("S")


def kept_on(owner: object, name: str, make: Callable[[], S]) -> S:
    """``owner.__dict__[name]``, made by ``make()`` the first time only: a store an object
    keeps beside its state (its ``__getstate__`` leaves it out). Of two threads making it at
    once, ``dict.setdefault`` keeps one for both."""
    found = owner.__dict__.get(name)
    return found if found is not None else owner.__dict__.setdefault(name, make())


class LRU(Generic[V]):
    """At most ``size`` entries (None: no count bound) and ``max_bytes`` of them (None: no
    byte bound), least recently used out first. Values are never None (None is "not
    held")."""

    def __init__(self, size: int | None = None, max_bytes: int | None = None) -> None:
        if size is not None and size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.size, self.max_bytes = size, max_bytes
        self.hits = self.misses = self.bytes = 0
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def keys(self) -> list[Hashable]:
        """The keys, least recently used first."""
        with self._lock:
            return list(self._items)

    def sizes(self) -> list[int]:
        """The size given with each entry, least recently used first."""
        with self._lock:
            return [n for _, n in self._items.values()]

    def get(self, key: Hashable) -> V | None:
        """The value under ``key`` (now the most recently used), or None; counted."""
        return self.get_many((key,))[0]

    def get_many(self, keys: Sequence[Hashable]) -> list[V | None]:
        """:meth:`get` of each key, under one lock."""
        out: list[V | None] = []
        with self._lock:
            for key in keys:
                held = self._items.get(key)
                if held is None:
                    out.append(None)
                    continue
                self._items.move_to_end(key)
                out.append(held[0])
            found = sum(v is not None for v in out)
            self.hits += found
            self.misses += len(out) - found
        return out

    def put(self, key: Hashable, value: V, nbytes: int = 0) -> V:
        """Keep ``value`` under ``key`` (``nbytes`` its size); returns it."""
        self.put_many(((key, value, nbytes),))
        return value

    def put_many(self, entries: Iterable[tuple[Hashable, V, int]]) -> None:
        """:meth:`put` of each ``(key, value, nbytes)``, under one lock, then the bounds."""
        with self._lock:
            for key, value, nbytes in entries:
                old = self._items.pop(key, None)
                self.bytes += nbytes - (old[1] if old is not None else 0)
                self._items[key] = (value, nbytes)
            while len(self._items) > 1 and self._over():
                self.bytes -= self._items.popitem(last=False)[1][1]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.bytes = 0

    def _over(self) -> bool:
        return (self.size is not None and len(self._items) > self.size) or (
            self.max_bytes is not None and self.bytes > self.max_bytes
        )
