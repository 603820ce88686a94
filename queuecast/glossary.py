"""The words the pages use, defined once: the glossary page, the tooltips of table headers and
the links from every term all read this module (``templates/glossary.html``, the ``term``
template tag in ``queuecast/templatetags/qc.py``).

Each definition says what the code computes, with the numbers the code uses; a test
(``tests/service/test_glossary.py``) checks those numbers against the constants in the
modules named in ``source``, that every registered wait and runtime method has an entry,
and that every term a template links to exists. The entries live in
:mod:`queuecast.glossary_methods`, :mod:`queuecast.glossary_measures` and
:mod:`queuecast.glossary_runs` and :mod:`queuecast.glossary_service`.
"""

from __future__ import annotations

from queuecast.glossary_measures import TERMS as MEASURES
from queuecast.glossary_methods import TERMS as METHODS
from queuecast.glossary_runs import TERMS as RUNS
from queuecast.glossary_service import TERMS as SERVICE
from queuecast.glossary_term import GROUPS, Term

__all__ = ["GROUPS", "TERMS", "Term", "by_group", "for_method", "get"]


def _load() -> dict[str, Term]:
    out: dict[str, Term] = {}
    for term in (*METHODS, *MEASURES, *RUNS, *SERVICE):
        if term.key in out:
            raise ValueError(f"glossary term {term.key!r} is defined twice")
        if term.group not in GROUPS:
            raise ValueError(f"glossary term {term.key!r} has an unknown group {term.group!r}")
        out[term.key] = term
    return out


TERMS: dict[str, Term] = _load()
_BY_METHOD = {m: t for t in TERMS.values() for m in t.methods}


def get(key: str) -> Term:
    """The entry ``key``; an unknown key raises ``KeyError`` naming it (a template typo)."""
    try:
        return TERMS[key]
    except KeyError:
        raise KeyError(f"no glossary term {key!r}") from None


def for_method(kind: str, name: str) -> Term | None:
    """The entry of a registered method (``kind`` is ``wait`` or ``runtime``), or None."""
    return _BY_METHOD.get(f"{kind}:{name}")


def by_group() -> list[tuple[str, list[Term]]]:
    """The glossary page's sections, terms in alphabetical order within each."""
    return [
        (g, sorted((t for t in TERMS.values() if t.group == g), key=lambda t: t.name.lower()))
        for g in GROUPS
    ]
