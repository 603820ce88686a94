"""One fit per trace at a time: concurrent first predictions wait for a single fit."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from predictor.services.fitted_cache import FittedCache
from queuecast.singleflight import SingleFlight


def slow_fit(calls: list[int]):
    def fit(trace):
        calls.append(trace.pk)
        time.sleep(0.3)  # long enough for every caller to arrive while it runs
        return {"fitted": trace.pk, "thread": threading.get_ident()}

    return fit


def test_concurrent_first_predictions_on_one_trace_fit_it_once() -> None:
    calls: list[int] = []
    cache = FittedCache(4, slow_fit(calls))
    trace = SimpleNamespace(pk=7, job_count=100, finished_at=None)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: cache.get(trace), range(8)))
    assert calls == [7]
    assert all(r is results[0] for r in results)


def test_different_traces_fit_side_by_side() -> None:
    """Each fit waits until the other one has started: fits run one after the other would
    break the barrier (after 10 s) instead of passing it."""
    calls: list[int] = []
    both = threading.Barrier(2, timeout=10)

    def fit(trace):
        calls.append(trace.pk)
        both.wait()
        return {"fitted": trace.pk}

    cache = FittedCache(4, fit)
    traces = [SimpleNamespace(pk=k, job_count=1, finished_at=None) for k in (1, 2)]
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(cache.get, traces))
    assert sorted(calls) == [1, 2] and [g["fitted"] for g in got] == [1, 2]


def test_a_failed_fit_reaches_every_waiter_and_the_next_call_tries_again() -> None:
    flights: SingleFlight[int] = SingleFlight()
    attempts = []

    def failing() -> int:
        attempts.append(1)
        time.sleep(0.2)
        raise ValueError("no history")

    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(flights.do, "k", failing) for _ in range(4)]
        for future in futures:
            with pytest.raises(ValueError, match="no history"):
                future.result()
    assert len(attempts) == 1
    assert flights.do("k", lambda: 5) == 5


def test_a_fit_past_the_memory_ceiling_fails_with_the_reason(settings) -> None:
    import numpy as np

    from queuecast.limits import RunLimitExceeded

    settings.QUEUECAST_RUN_MEMORY_MB = 256
    cache = FittedCache(4, lambda trace: np.ones(2**30))  # 8 GB
    with pytest.raises(RunLimitExceeded, match="memory ceiling reached") as caught:
        cache.get(SimpleNamespace(pk=1, job_count=1, finished_at=None))
    assert caught.value.status_code == 503
