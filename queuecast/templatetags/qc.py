"""Template filters for pages: ``duration``, ``relative``, ``percent`` and ``get``."""

from __future__ import annotations

from django import template

from queuecast import humanize

register = template.Library()


@register.filter
def duration(seconds: float | None) -> str:
    return humanize.duration(seconds)


@register.filter
def relative(seconds: float | None) -> str:
    return humanize.relative(seconds)


@register.filter
def percent(fraction: float | None, digits: int = 0) -> str:
    return humanize.percent(fraction, int(digits))


@register.filter
def get(mapping: dict | None, key: str):  # noqa: ANN201 (any value)
    """``{{ row|get:"aae_s" }}``: a dict item whose key is not an identifier."""
    return (mapping or {}).get(key)


@register.filter
def minutes(value: float | None) -> str:
    """``{{ mean_wait_min|minutes }}``: a duration given in minutes (PySS's unit), humanised."""
    number = humanize.as_number(value)
    return humanize.duration(None if number is None else number * 60.0)
