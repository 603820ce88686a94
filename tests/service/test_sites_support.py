"""Helpers for the live-site tests (no tests here): sites on the simulated backend, a
controllable predictor at the one seam the decisions use (``site_answers``), API clients."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from django.utils import timezone

from holdqueue.models import Site, SiteJob
from holdqueue.services import predict as site_predict
from holdqueue.services.sites import create_site
from jobmolding.core.future import predicted_ends
from predictor.core.runtime.rangeset import RangeSet
from tests.service.traces_support import api_for, make_user
from traces.core.swf import write_swf
from traces.models import Trace
from traces.services.ingest import ingest_swf

__all__ = [
    "FakePredictor",
    "api_for",
    "demo_trace",
    "held",
    "install_answers",
    "make_user",
    "simulated_site",
]


@lru_cache(maxsize=1)
def demo_swf() -> Path:
    """The demo workload (300 jobs, 64 processors, waits from EASY), made once per session."""
    from pyss_adapter.core.demo import demo_trace as make

    path = Path(tempfile.mkdtemp(prefix="queuecast-sites-")) / "demo.swf"
    write_swf(make(300, 64, seed=1), path)
    return path


def demo_trace() -> Trace:
    return ingest_swf(demo_swf(), name="demo-lublin")


def simulated_site(name: str = "sim", speed: float = 1.0, **extra: Any) -> Site:
    trace = Trace.objects.filter(name="demo-lublin").first() or demo_trace()
    data = {
        "name": name,
        "backend": "simulated",
        "partition": "",
        "trace": trace,
        "config": {"speed": speed},
        "warm_up": True,
        **extra,
    }
    return create_site(data, None)


@dataclass
class FakeAnswers:
    wait_s: np.ndarray
    runtimes: list[RangeSet]


@dataclass
class FakePredictor:
    """Wait = ``wait_per_proc`` x procs now, ``future_wait_s`` for a request in the future;
    every runtime a single range ``[runtime_s, runtime_s]``. Counts its calls."""

    wait_per_proc: float = 0.0
    now_wait_s: float = 0.0
    future_wait_s: float = 0.0
    runtime_s: float = 100.0
    calls: int = 0

    def __call__(self, site, snapshot, batch) -> FakeAnswers:
        self.calls += 1
        future = batch.submit_s > snapshot.known_at_s + 1e-6  # asked at a future time
        base = np.where(future, self.future_wait_s, self.now_wait_s)
        wait = base + self.wait_per_proc * batch.procs
        one = RangeSet(np.array([self.runtime_s]), np.array([self.runtime_s]), np.array([1.0]))
        return FakeAnswers(wait.astype(float), [one] * len(batch))

    def install(self, monkeypatch) -> FakePredictor:
        install_answers(monkeypatch, self)
        return self


@dataclass(frozen=True)
class SeamPredictor:
    """What ``site_predict.site_answers`` hands the arrival decision, answered by ``answer``
    (called as ``answer(site, snapshot, batch)``, returning ``wait_s`` and ``runtimes``)."""

    site: Any
    answer: Any

    def predict(
        self, snapshot: Any, batch: Any, runtimes: Any = None
    ) -> tuple[np.ndarray, list[RangeSet]]:
        got = self.answer(self.site, snapshot, batch)
        return got.wait_s, got.runtimes if runtimes is None else runtimes

    def runtimes(self, snapshot: Any, batch: Any) -> list[RangeSet]:
        return self.answer(self.site, snapshot, batch).runtimes

    def running_ends(self, snapshot: Any) -> np.ndarray:
        return predicted_ends(snapshot, None, lambda batch: self.runtimes(snapshot, batch))


def install_answers(monkeypatch, answer: Any) -> None:
    """Stub the one seam the live decisions use: the site's plain predictor."""
    monkeypatch.setattr(
        site_predict, "site_answers", lambda site, history=None: SeamPredictor(site, answer)
    )


def job_body(**extra: Any) -> dict[str, Any]:
    """A job request; a key given as None is left out."""
    body = {"procs": 8, "time_limit_s": 600, "command": "sleep 1", "name": "t", **extra}
    return {k: v for k, v in body.items() if v is not None}


def held(site: Site, owner: Any, **extra: Any) -> SiteJob:
    """A held site job of ``owner``, released now unless ``extra`` says otherwise."""
    fields = {
        "site": site,
        "owner": owner,
        "name": "h",
        "script": "#!/bin/sh\nsleep 1\n",
        "procs_requested": 2,
        "procs_chosen": 2,
        "time_limit_s": 60,
        "state": SiteJob.HELD,
        "arrived_at": timezone.now(),
        "release_at": timezone.now(),
        **extra,
    }
    return SiteJob.objects.create(**fields)
