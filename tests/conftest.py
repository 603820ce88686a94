"""Shared fixtures: the real-trace folder and small hand-made SWF files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings

FIXTURES = Path(__file__).parent / "fixtures"


def traces_dir() -> Path | None:
    """The shared PWA traces folder (QUEUECAST_TRACES_DIR), or None if absent."""
    path = getattr(settings, "QUEUECAST_TRACES_DIR", None) or os.environ.get("QUEUECAST_TRACES_DIR")
    if path and Path(path).is_dir() and any(Path(path).glob("*.swf*")):
        return Path(path)
    return None


@pytest.fixture(scope="session")
def shared_traces() -> Path:
    """Skip (with the reason) when the real traces are not on this machine."""
    path = traces_dir()
    if path is None and os.environ.get("QUEUECAST_REQUIRE_TRACES") == "1":
        pytest.fail("QUEUECAST_REQUIRE_TRACES=1 but no traces in QUEUECAST_TRACES_DIR")
    if path is None:
        pytest.skip(
            "real PWA traces not found: set QUEUECAST_TRACES_DIR to a folder of .swf.gz files "
            "(CI uses ../shared/traces)"
        )
    return path


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
