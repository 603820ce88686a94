"""Template filters and tags for pages: durations, percentages, and glossary terms."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import conditional_escape, format_html

from queuecast import glossary, humanize

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
def get(mapping: dict | None, key: str):
    """``{{ row|get:"aae_s" }}``: a dict item whose key is not an identifier."""
    return (mapping or {}).get(key)


@register.filter
def minutes(value: float | None) -> str:
    """``{{ mean_wait_min|minutes }}``: a duration given in minutes (PySS's unit), humanised."""
    number = humanize.as_number(value)
    return humanize.duration(None if number is None else number * 60.0)


def _term_link(term: glossary.Term, text: str | None = None) -> str:
    return format_html(
        '<a class="term" href="{}#{}" title="{}">{}</a>',
        reverse("glossary"),
        term.key,
        term.short,
        term.name if text is None else text,
    )


@register.simple_tag
def term(key: str, text: str | None = None) -> str:
    """``{% term "aae" %}``: the term linked to its glossary entry, its definition as the
    tooltip; ``{% term "aae" "average error" %}`` writes other words. An unknown key raises."""
    return _term_link(glossary.get(key), text)


@register.simple_tag
def tip(key: str) -> str:
    """``title="{% tip 'aae' %}"``: the term's one-sentence definition."""
    return glossary.get(key).short


@register.filter
def method_term(name: str, kind: str) -> str:
    """``{{ r.method|method_term:"wait" }}``: a registered method's name linked to its entry
    (the bare name when the glossary has none: a test keeps every registered method in it)."""
    found = glossary.for_method(kind, str(name))
    return _term_link(found, str(name)) if found else conditional_escape(name)


@register.filter
def words(key: str) -> str:
    """``{{ "missing_run_time"|words }}`` -> ``"Missing run time"``: a JSON key as words."""
    return str(key).replace("_", " ").strip().capitalize()
