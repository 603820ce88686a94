"""The live-site settings, read where they are used (tests change them per test)."""

from __future__ import annotations

from typing import Any

from django.conf import settings


def setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)
