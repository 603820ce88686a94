"""Parts a higher app adds to a lower app's page (docs/architecture.md, "Layers").

Apps depend one way (queuecast < traces < pyss_adapter < predictor < jobmolding <
holdqueue). A page owned by a lower app sometimes shows what a higher app holds: the runs
page (predictor) lists molding runs (jobmolding), the predict page (predictor) answers for
a live site (holdqueue). The lower app may not import the higher one, so the higher app
registers its part here from its ``AppConfig.ready`` and the page asks for the parts of a
slot. A slot with nothing registered is simply left out of the page.

Slots
-----
``RUNS_LIST``: ``part(user) -> dict``, a block of the runs page's context under its name.
``PREDICT_SITE``: an object with ``sites() -> QuerySet``, ``site_answer(site, user, data)
-> (raw | None, errors)`` and ``present_site(site, raw, confidence) -> dict``.
"""

from __future__ import annotations

from typing import Any

RUNS_LIST = "runs.list"
PREDICT_SITE = "predict.site"

_PARTS: dict[str, dict[str, Any]] = {}


def register(slot: str, name: str, part: Any) -> None:
    """Add (or replace, on a second ``ready``) the part ``name`` of ``slot``."""
    _PARTS.setdefault(slot, {})[name] = part


def parts(slot: str) -> dict[str, Any]:
    """Every part of ``slot`` by name, in registration order (apps' order)."""
    return dict(_PARTS.get(slot, {}))


def part(slot: str, name: str) -> Any | None:
    """The part ``name`` of ``slot``, or None when no app registered it."""
    return _PARTS.get(slot, {}).get(name)
