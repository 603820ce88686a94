"""Apps depend one way: queuecast < traces < pyss_adapter < predictor < jobmolding < holdqueue.

A module of an app may import its own app and the apps below it, never one above, not even
inside a function or under ``if TYPE_CHECKING:`` (docs/architecture.md, "Layers"). Where a
lower app's page shows a higher app's parts, the higher app registers them in
``queuecast.page_parts``. Imports are read with ``ast`` (nothing is executed); migrations
are generated and left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("queuecast", "traces", "pyss_adapter", "predictor", "jobmolding", "holdqueue")
RANK = {app: k for k, app in enumerate(LAYERS)}

# Upward imports still to fix, as (file, module); each entry must still be there, so the
# list can only shrink. Empty: no app imports a higher one.
PENDING: set[tuple[str, str]] = set()


def app_files() -> list[Path]:
    return sorted(
        path
        for app in LAYERS
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.relative_to(ROOT).parts
    )


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """``(line, absolute module)`` of every import anywhere in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def upward_imports() -> list[tuple[str, int, str]]:
    """``(file, line, module)`` where an app imports one above it."""
    out = []
    for path in app_files():
        rel = path.relative_to(ROOT).as_posix()
        own = RANK[rel.split("/")[0]]
        for line, module in imported_modules(path):
            target = RANK.get(module.split(".")[0])
            if target is not None and target > own:
                out.append((rel, line, module))
    return out


def test_no_app_imports_an_app_above_it() -> None:
    new = [f"{f}:{line} imports {m}" for f, line, m in upward_imports() if (f, m) not in PENDING]
    assert not new, "upward imports (register a part in queuecast.page_parts, or move the code "
    "down to the lowest app both may import):\n" + "\n".join(new)


def test_pending_upward_imports_are_still_there() -> None:
    present = {(f, m) for f, _, m in upward_imports()}
    assert not PENDING - present, f"fixed: drop from PENDING {sorted(PENDING - present)}"


def test_no_two_apps_import_each_other() -> None:
    edges = {(f.split("/")[0], m.split(".")[0]) for f, _, m in all_app_imports()}
    both = sorted({tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges and e[0] != e[1]})
    pending = {(f.split("/")[0], m.split(".")[0]) for f, m in PENDING}
    pending |= {(b, a) for a, b in pending}
    assert [pair for pair in both if pair not in pending] == []


def all_app_imports() -> list[tuple[str, int, str]]:
    out = []
    for path in app_files():
        rel = path.relative_to(ROOT).as_posix()
        out += [(rel, line, m) for line, m in imported_modules(path) if m.split(".")[0] in RANK]
    return out


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("from holdqueue.models import Site\n", True),
        ("def f():\n    from jobmolding.core import policy\n", True),
        ("import holdqueue.services.predict as p\n", True),
        ("from traces.models import Trace\n", False),
        ("from . import pages\n", False),
    ],
)
def test_the_check_sees_imports_at_any_depth(tmp_path: Path, source: str, flagged: bool) -> None:
    """A predictor module importing holdqueue or jobmolding is caught, even in a function."""
    path = tmp_path / "mod.py"
    path.write_text(source)
    higher = [
        m for _, m in imported_modules(path) if RANK.get(m.split(".")[0], -1) > RANK["predictor"]
    ]
    assert bool(higher) is flagged


def test_higher_apps_register_their_parts_of_lower_pages() -> None:
    """The runs page gets the molding block and the predict page the live-site branch from
    the apps that own them (``AppConfig.ready``), not by importing them."""
    from holdqueue import pages_predict
    from jobmolding.pages import runs_block
    from queuecast import page_parts

    assert page_parts.parts(page_parts.RUNS_LIST) == {"molding": runs_block}
    assert page_parts.part(page_parts.PREDICT_SITE, "site") is pages_predict
    assert page_parts.part(page_parts.PREDICT_SITE, "nothing") is None
