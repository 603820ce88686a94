"""Long-lived objects kept out of the collector's full passes, and freed once dropped
(``queuecast.heap``, ``queuecast.kept.KeptModels`` under the trace bundles'
``predictor.services.fitted_cache.FittedCache`` and the site models)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from predictor.services.fitted_cache import FittedCache
from queuecast import heap
from queuecast.kept import KeptModels


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


def test_a_site_model_is_frozen_when_new_not_when_counted_again(monkeypatch) -> None:
    from holdqueue.services import predict as site_predict

    freezes: list[bool] = []
    real = heap.freeze_long_lived
    monkeypatch.setattr(heap, "freeze_long_lived", lambda: (freezes.append(True), real()))
    models = KeptModels(1, site_predict._same_model)
    first = Cyclic("site model 1")
    gone = weakref.ref(first)
    models.put(1, site_predict._Held(first, "a", 0.0))
    models.put(1, site_predict._Held(first, "a", 5.0))  # its history counted again
    assert len(freezes) == 1
    del first
    models.put(2, site_predict._Held(Cyclic("site model 2"), "b", 0.0))  # evicts site 1's
    assert len(freezes) == 2 and gone() is None


def test_a_model_replaced_under_its_key_or_popped_is_freed() -> None:
    kept: KeptModels[Cyclic] = KeptModels(4)
    kept.put("site", Cyclic("old"))
    gone = weakref.ref(kept.get("site"))
    kept.put("site", Cyclic("new"))  # a refit replaces it: the cache held the only reference
    assert gone() is None
    kept.put("other", Cyclic("other"))
    assert len(kept) == 2
    popped = weakref.ref(kept.get("other"))
    assert kept.pop("other") is not None and "other" not in kept
    kept.put("third", Cyclic("third"))
    assert popped() is None
    assert kept.get("site").name == "new"
