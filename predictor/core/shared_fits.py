"""Fits shared within one fitting scope: the same deterministic model on the same data once.

Choosing a site's runtime method fits the same quantile GBM on the same context up to three
times: the ``quantile`` candidate and ``density``'s part (c) on the dev context, and the
chosen ``density``'s own dev fit on the whole context's first half (``choose``,
``density._choose_level``). Each fit trains its models lazily, per row block, and training is
deterministic (fixed ``random_state``), so the copies would train the same models. Inside
``with fit_scope():`` a method may keep what it learned under a key naming its class, its
parameters and the very context arrays, and a later fit with the same key takes it instead
of learning again: the same answers, trained once. Outside a scope nothing is kept (each fit
is independent, as before). The scope holds its entries only while it is open.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_SCOPE: ContextVar[dict[Hashable, tuple[Any, Any]] | None] = ContextVar(
    "queuecast_fit_scope", default=None
)


@contextmanager
def fit_scope() -> Iterator[None]:
    """Share fits made inside the block (nested scopes share the outermost's)."""
    if _SCOPE.get() is not None:
        yield
        return
    token = _SCOPE.set({})
    try:
        yield
    finally:
        _SCOPE.reset(token)


def shared(key: Hashable, anchor: Any, build: Callable[[], T]) -> T:
    """``build()``, or inside a scope the value built earlier under ``key``.

    ``key`` names the data by identity (``id`` of its arrays); ``anchor`` (those arrays' owner)
    is kept beside the value so that no id is reused while the scope is open.
    """
    scope = _SCOPE.get()
    if scope is None:
        return build()
    if key not in scope:
        scope[key] = (anchor, build())
    return scope[key][1]
