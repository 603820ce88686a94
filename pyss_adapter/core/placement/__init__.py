"""Node-level placement policies for the replay engine (spec placement.md).

One module per idea: ``base`` (contract, nodes, piece loop), ``usage`` (per-job CPU use
and its time model), ``baselines``, ``trimaran`` (TLP, LVRB), ``gpa`` (estimators,
offline packing), ``pool`` (GPA family in replays), ``cash`` (T3 bucket, CASH's
order), ``credits`` (T3 nodes that slow jobs down), ``metrics``. Every registered name
goes through ``tests/core/placement/test_contract.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from pyss_adapter.core.placement.base import Placement, PlacementError
from pyss_adapter.core.placement.baselines import (
    BestFit,
    FirstFit,
    LeastAllocated,
    RandomFit,
    RoundRobin,
)
from pyss_adapter.core.placement.credits import Cash, T3FirstFit, T3Random, T3RoundRobin
from pyss_adapter.core.placement.pool import PoolPlacement
from pyss_adapter.core.placement.trimaran import LoadVariationRiskBalancing, TargetLoadPacking

__all__ = ["OPTION_KEYS", "PLACEMENTS", "PLACEMENT_NAMES", "Placement", "PlacementError",
           "make_placement"]  # fmt: skip


def _pool(kind: str, key: str | None, default: float, name: str) -> Callable[..., Placement]:
    def make(**kw: Any) -> Placement:
        param = kw.pop(key, default) if key else 0.0
        return PoolPlacement(kind, float(param), name=name, **kw)

    return make


PLACEMENTS: dict[str, Callable[..., Any]] = {
    "first-fit": FirstFit,
    "best-fit": BestFit,
    "round-robin": RoundRobin,
    "random": RandomFit,
    "least-allocated": LeastAllocated,
    "tlp": TargetLoadPacking,
    "lvrb": LoadVariationRiskBalancing,
    "gpa": _pool("gpa", "rho", 0.1, "gpa"),
    "pool-cantelli": _pool("cantelli", "b", 1.7, "pool-cantelli"),
    "pool-av": _pool("av", "f", 1.0, "pool-av"),
    "pool-perc": _pool("perc", "p", 90.0, "pool-perc"),
    "pool-slots": _pool("slots", None, 0.0, "pool-slots"),
    "cash": Cash,
    "t3-round-robin": T3RoundRobin,
    "t3-random": T3Random,
    "t3-first-fit": T3FirstFit,
}
PLACEMENT_NAMES: tuple[str, ...] = tuple(PLACEMENTS)

_CLUSTER = {"tie", "whole_first", "seed"}
_CREDITS = _CLUSTER | {"instance", "t3_mode", "t3_initial", "credits", "price_t3", "price_m5",
                       "price_emr", "price_surplus"}  # fmt: skip
_POOL = {"fit", "pool_cores", "seed"}
OPTION_KEYS: dict[str, set[str]] = {
    "first-fit": _CLUSTER,
    "best-fit": _CLUSTER,
    "round-robin": _CLUSTER,
    "random": _CLUSTER,
    "least-allocated": _CLUSTER,
    "tlp": _CLUSTER | {"target"},
    "lvrb": _CLUSTER | {"margin", "sensitivity", "node_mem_kb"},
    "gpa": _POOL | {"rho"},
    "pool-cantelli": _POOL | {"b"},
    "pool-av": _POOL | {"f"},
    "pool-perc": _POOL | {"p"},
    "pool-slots": _POOL,
    "cash": _CREDITS | {"theta", "cash_refresh_s"},
    "t3-round-robin": _CREDITS,
    "t3-random": _CREDITS,
    "t3-first-fit": _CREDITS,
}
_BOOL = {"whole_first"}
_STR = {"tie", "fit", "instance", "t3_mode", "t3_initial", "credits"}
_INT = {"pool_cores", "seed"}


def parse_option(name: str, key: str, value: Any) -> Any:
    """Type one option value (from ``KEY=VALUE`` text or JSON); errors name the key."""
    if key not in OPTION_KEYS.get(name, set()):
        allowed = ", ".join(sorted(OPTION_KEYS.get(name, set())))
        raise ValueError(f"placement {name!r} has no option {key!r}; options: {allowed}")
    if key in _STR:
        return str(value)
    if key in _BOOL:
        if isinstance(value, bool):
            return value
        text = str(value).lower()
        if text not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"option {key} must be true or false; got {value!r}")
        return text in ("true", "1", "yes")
    try:
        return int(value) if key in _INT else float(value)
    except (TypeError, ValueError):
        raise ValueError(f"option {key} must be a number; got {value!r}") from None


def make_placement(name: str, **options: Any) -> Placement:
    """A fresh placement; unknown names or option keys raise ``ValueError`` naming them."""
    if name not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENT_NAMES)}; got {name!r}")
    typed = {k: parse_option(name, k, v) for k, v in options.items()}
    return partial(PLACEMENTS[name], **typed)()
