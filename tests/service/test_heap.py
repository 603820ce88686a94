"""Long-lived objects kept out of the collector's full passes, and freed once dropped
(``queuecast.heap``, ``predictor.services.fitted_cache.FittedCache``)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from predictor.services.fitted_cache import FittedCache
from queuecast import heap


class Cyclic:
    """A model in a reference cycle: only the cyclic collector frees it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.me = self


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()
    heap._released = False


def test_a_freeze_moves_what_is_alive_out_of_the_collections() -> None:
    gc.unfreeze()
    heap.freeze_long_lived()
    assert gc.get_freeze_count() > 1000  # the modules at least
    model = Cyclic("kept")
    heap.freeze_long_lived()
    assert any(o is model for o in gc.get_objects()) is False  # frozen: no generation holds it


def test_a_dropped_cycle_is_freed_at_the_next_freeze_only_once_released() -> None:
    model = Cyclic("dropped")
    ref = weakref.ref(model)
    heap.freeze_long_lived()
    del model
    heap.freeze_long_lived()
    assert ref() is not None  # frozen and not said to be released: kept
    heap.released()
    heap.freeze_long_lived()
    assert ref() is None


def trace(pk: int) -> SimpleNamespace:
    return SimpleNamespace(pk=pk, job_count=1, finished_at=None)


def test_a_bundle_evicted_from_its_cache_or_cleared_is_freed() -> None:
    cache: FittedCache[Cyclic] = FittedCache(1, lambda t: Cyclic(f"bundle {t.pk}"))
    first = weakref.ref(cache.get(trace(1)))
    assert first() is not None and gc.get_freeze_count() > 0
    second = weakref.ref(cache.get(trace(2)))  # evicts the first
    assert first() is None and second() is not None
    cache.clear()
    cache.get(trace(3))
    assert second() is None
