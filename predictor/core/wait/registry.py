"""Queue-wait methods by name, for the command, the task, the API and the contract test.

Adding a method is one module (a :class:`predictor.core.wait.base.WaitEstimator`) and one line
in :data:`FACTORIES`; nothing else names methods. ``make_method(name, random_state)`` builds a
fresh, unfitted method (methods without randomness ignore the seed).
"""

from __future__ import annotations

from collections.abc import Callable

from predictor.core.wait.apq import APQ
from predictor.core.wait.auto import AutoWait
from predictor.core.wait.baselines import RecentMedian, ZeroWait
from predictor.core.wait.gbm import WaitGBM
from predictor.core.wait.ibl import IBL
from predictor.core.wait.qbets import QBETS
from predictor.core.wait.sim import SimulatedStart
from predictor.core.wait.types import WaitMethod

DEFAULT_METHODS = ("apq", "qbets", "ibl", "median", "gbm")

FACTORIES: dict[str, Callable[[int | None], WaitMethod]] = {
    "apq": lambda seed: APQ(),  # deterministic
    "qbets": lambda seed: QBETS(),
    "ibl": lambda seed: IBL(random_state=seed),
    "median": lambda seed: RecentMedian(),
    "gbm": lambda seed: WaitGBM(random_state=seed),
    "zero": lambda seed: ZeroWait(),
    "sim": lambda seed: SimulatedStart(),
    "auto": lambda seed: AutoWait(random_state=seed, make=make_method),  # one of the above
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
