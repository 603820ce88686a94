"""Runtime methods by name, for the command, the task, the API and the contract test.

Adding a method is one module (a :class:`predictor.core.runtime.base.RuntimeEstimator`) and one
line in :data:`FACTORIES`; nothing else names methods. ``make_method(name, random_state)``
builds a fresh, unfitted method (methods without randomness ignore the seed).
"""

from __future__ import annotations

from collections.abc import Callable

from predictor.core.runtime.auto import AutoRuntime
from predictor.core.runtime.density import DensityRangeSet
from predictor.core.runtime.li import LiKnnPredictor
from predictor.core.runtime.peers import BaselineRange, RequestedTime, TsafrirPredictor
from predictor.core.runtime.quantile import QuantileGBRange
from predictor.core.runtime.rangeset_predictor import RangeSetPredictor
from predictor.core.runtime.smith import SmithTemplates
from predictor.core.runtime.types import RuntimeMethod

FACTORIES: dict[str, Callable[[int | None], RuntimeMethod]] = {
    "rangeset": lambda seed: RangeSetPredictor(),
    "baseline": lambda seed: BaselineRange(),
    "smith": lambda seed: SmithTemplates(),
    "li": lambda seed: LiKnnPredictor(),
    "tsafrir": lambda seed: TsafrirPredictor(),
    "requested": lambda seed: RequestedTime(),
    "quantile": lambda seed: QuantileGBRange(random_state=seed or 0),
    "density": lambda seed: DensityRangeSet(random_state=seed or 0),
    # the one of the above this site's tuning part chose (predictor.core.runtime.choose)
    "auto": lambda seed: AutoRuntime(random_state=seed or 0, make=make_method),
}
METHODS = tuple(FACTORIES)
#: The reference every method's range length is compared with (seed: "relative length").
REFERENCE = "baseline"


def parse_methods(text: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Names from ``"rangeset,li"`` or a list (all methods when empty); unknown names raise
    ``ValueError`` naming them."""
    if not text:
        return list(METHODS)
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = [n for n in names if n not in FACTORIES]
    if unknown or not names:
        raise ValueError(
            f"unknown runtime methods {unknown or '(none)'}; choose from {', '.join(METHODS)}"
        )
    return list(dict.fromkeys(names))


def make_method(name: str, random_state: int | None = 0) -> RuntimeMethod:
    """A fresh, unfitted method called ``name``."""
    return FACTORIES[parse_methods([name])[0]](random_state)
