"""Queue-wait methods by name, for the command, the task and the API.

``make_method(name, random_state)`` builds a fresh, unfitted method. APQ and the simulator
are imported lazily so that the peers work on their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from predictor.core.wait.baselines import RecentMedian, ZeroWait
from predictor.core.wait.gbm import WaitGBM
from predictor.core.wait.ibl import IBL
from predictor.core.wait.qbets import QBETS
from predictor.core.wait.types import WaitContext, WaitMethod, WaitPrediction

DEFAULT_METHODS = ("apq", "qbets", "ibl", "median", "gbm")


class SimulatedStart:
    """What ``squeue --start`` does: simulate the queue forward with EASY and requested times.

    Wraps ``pyss_adapter.core.start_estimate.simulated_waits``; nothing to learn.
    """

    name = "sim"

    def fit(self, ctx: WaitContext) -> SimulatedStart:
        return self

    def predict(
        self, ctx: WaitContext, targets: np.ndarray, progress: Any = None
    ) -> WaitPrediction:
        from pyss_adapter.core.start_estimate import simulated_waits

        # real starts (submit + wait from the log) place the running and queued jobs at t
        waits = simulated_waits(ctx.jobs, np.asarray(targets), ctx.machine_procs)
        return WaitPrediction(wait_s=np.maximum(np.asarray(waits, dtype=float), 0.0))


def _apq(random_state: int | None) -> WaitMethod:
    from predictor.core.wait.apq import APQ

    try:
        return APQ(random_state=random_state)
    except TypeError:  # APQ without a random_state parameter
        return APQ()


FACTORIES: dict[str, Callable[[int | None], WaitMethod]] = {
    "apq": _apq,
    "qbets": lambda seed: QBETS(),
    "ibl": lambda seed: IBL(random_state=seed),
    "median": lambda seed: RecentMedian(),
    "gbm": lambda seed: WaitGBM(random_state=seed),
    "zero": lambda seed: ZeroWait(),
    "sim": lambda seed: SimulatedStart(),
}


def parse_methods(text: str | list[str] | tuple[str, ...]) -> list[str]:
    """Method names from ``"apq,qbets"`` or a list; unknown names raise ``ValueError``."""
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = [n for n in names if n not in FACTORIES]
    if unknown or not names:
        raise ValueError(f"unknown methods {unknown or '(none)'}; choose from {sorted(FACTORIES)}")
    return list(dict.fromkeys(names))


def make_method(name: str, random_state: int | None = 0) -> WaitMethod:
    """A fresh, unfitted method called ``name``."""
    return FACTORIES[parse_methods([name])[0]](random_state)


def make_methods(names: list[str], random_state: int | None = 0) -> dict[str, WaitMethod]:
    return {n: make_method(n, random_state) for n in names}
