"""One glossary entry and the glossary's sections (see :mod:`queuecast.glossary`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One glossary entry.

    key : the anchor on the glossary page (``/glossary/#key``) and the template tag's name.
    name : how the pages write the term. short : one sentence, the tooltip.
    text : the glossary's paragraphs (plain text, paragraphs split by blank lines).
    group : the glossary section. source : the module that computes it (for readers who
    want the formula in the code). methods : registry names this entry defines, as
    ``"wait:apq"`` or ``"runtime:rangeset"``.
    """

    key: str
    name: str
    short: str
    text: str
    group: str
    source: str = ""
    methods: tuple[str, ...] = ()

    @property
    def paragraphs(self) -> list[str]:
        return [" ".join(p.split()) for p in self.text.strip().split("\n\n") if p.strip()]


GROUPS = (
    "Queue-wait methods",
    "Runtime methods",
    "Accuracy of wait predictions",
    "Accuracy of runtime predictions",
    "Answers",
    "Simulator and replays",
    "Molding and delayed submission",
    "Data",
)
