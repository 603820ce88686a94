"""The numeric core stays plain Python: no Django, DRF or Celery import (style.md)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("django", "rest_framework", "celery", "drf_spectacular", "queuecast")


def _core_files() -> list[Path]:
    """The apps' core packages (the test tree's own ``tests/core`` is not one of them)."""
    return sorted(p for p in ROOT.glob("*/core/**/*.py") if p.parts[len(ROOT.parts)] != "tests")


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_packages_exist() -> None:
    apps = {p.parts[-3] for p in _core_files()}
    assert {"traces", "predictor", "pyss_adapter", "jobmolding", "holdqueue"} <= apps


def test_core_modules_import_no_framework() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imported_roots(path) & set(FORBIDDEN))
        for path in _core_files()
    }
    assert {k: v for k, v in offenders.items() if v} == {}
