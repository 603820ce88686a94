"""docs/architecture.md shows the code as it is: every line of its ``python signatures``
blocks is ``module.name(parameters) -> return`` exactly as ``inspect.signature`` gives it,
and the method names it lists are the registries' names."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
BLOCK = re.compile(r"```python signatures\n(.*?)```", re.DOTALL)


def documented() -> list[str]:
    lines = [line for block in BLOCK.findall(DOC.read_text()) for line in block.splitlines()]
    return [line.strip() for line in lines if line.strip()]


class _Text:
    """An annotation kept as the source's text (``from __future__ import annotations``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def as_written(sig: inspect.Signature) -> str:
    def raw(annotation: Any) -> Any:
        return _Text(annotation) if isinstance(annotation, str) else annotation

    params = [p.replace(annotation=raw(p.annotation)) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=raw(sig.return_annotation)))


def resolve(dotted: str) -> Any:
    """``a.b.c.name`` or ``a.b.c.Class.method``: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_the_doc_shows_signatures() -> None:
    assert len(documented()) >= 20


@pytest.mark.parametrize("line", documented(), ids=lambda line: line.split("(")[0])
def test_each_signature_in_the_doc_matches_the_code(line: str) -> None:
    name, _, rest = line.partition("(")
    actual = as_written(inspect.signature(resolve(name)))
    assert f"({rest}" == actual, f"docs/architecture.md shows {name}({rest}; the code: {actual}"


def test_a_changed_signature_would_be_caught() -> None:
    def f(a: int, *, b: str = "x") -> None: ...

    assert as_written(inspect.signature(f)) == "(a: int, *, b: str = 'x') -> None"
    assert as_written(inspect.signature(f)) != "(a: int, b: str = 'x') -> None"


def test_the_method_names_listed_are_the_registries() -> None:
    from predictor.core.runtime.registry import FACTORIES as RUNTIME
    from predictor.core.wait.registry import FACTORIES as WAIT

    text = DOC.read_text()
    wait = re.search(r"^wait methods:\s+(.+)$", text, re.MULTILINE)
    runtime = re.search(r"^runtime methods:\s+(.+)$", text, re.MULTILINE)
    assert wait and runtime
    assert wait.group(1).split() == list(WAIT)
    assert runtime.group(1).split() == list(RUNTIME)
