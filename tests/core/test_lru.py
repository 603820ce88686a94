"""The one small LRU behind the per-instant, per-queue and per-history caches."""

from __future__ import annotations

import threading

import pytest

from predictor.core.lru import LRU


def test_the_least_recently_used_goes_first_past_the_count() -> None:
    kept: LRU[str] = LRU(size=2)
    kept.put("a", "A")
    kept.put("b", "B")
    assert kept.get("a") == "A"  # now the most recent
    kept.put("c", "C")
    assert kept.keys() == ["a", "c"] and "b" not in kept
    assert (kept.hits, kept.misses) == (1, 0)
    assert kept.get("b") is None and kept.misses == 1


def test_bytes_bound_the_store_but_the_newest_entry_stays() -> None:
    kept: LRU[int] = LRU(max_bytes=100)
    for k in range(5):
        kept.put(k, k, 40)
    assert kept.keys() == [3, 4] and kept.bytes == 80 == sum(kept.sizes())
    kept.put("big", -1, 500)  # larger than the bound: kept alone
    assert kept.keys() == ["big"] and kept.bytes == 500
    kept.put("big", -2, 10)  # replaced: its old size is given back
    kept.put("x", 0, 10)
    assert kept.keys() == ["big", "x"] and kept.bytes == 20 and kept.get("big") == -2


def test_many_at_once_count_each_key_and_keep_their_order() -> None:
    kept: LRU[int] = LRU(size=3)
    kept.put_many([("a", 1, 0), ("b", 2, 0)])
    assert kept.get_many(["b", "z", "a"]) == [2, None, 1]
    assert (kept.hits, kept.misses) == (2, 1) and kept.keys() == ["b", "a"]
    kept.put_many([("c", 3, 0), ("d", 4, 0)])
    assert kept.keys() == ["a", "c", "d"]
    kept.clear()
    assert len(kept) == 0 and kept.bytes == 0


def test_a_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="size must be >= 1"):
        LRU(size=0)


def test_threads_keep_the_bounds_and_the_byte_count() -> None:
    kept: LRU[int] = LRU(size=50, max_bytes=400)

    def work(seed: int) -> None:
        for k in range(2000):
            key = (seed * 7 + k) % 120
            if kept.get(key) is None:
                kept.put(key, k, 1 + key % 9)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(kept) <= 50 and kept.bytes == sum(kept.sizes()) <= 400
    assert kept.hits + kept.misses == 6 * 2000


def test_a_store_kept_on_an_object_is_made_once() -> None:
    from predictor.core.lru import kept_on

    class Owner:
        pass

    owner, made = Owner(), []

    def make() -> LRU[int]:
        made.append(1)
        return LRU(size=2)

    first = kept_on(owner, "_kept", make)
    assert kept_on(owner, "_kept", make) is first and len(made) == 1
