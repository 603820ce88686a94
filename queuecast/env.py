"""Typed readers of environment variables that fail loudly on bad values.

Every setting that comes from the environment goes through one of these, so a
typo such as ``QUEUECAST_MAX_UPLOAD_MB=5l2`` stops the process at start-up with
the variable's name and the value it could not read, instead of a silent default.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse


class ConfigError(RuntimeError):
    """An environment variable holds a value the service cannot use."""


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name}={raw!r}: expected one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected an integer") from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name}={raw!r}: must be >= {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, schemes: set[str]) -> str | None:
    """Return the URL in ``name`` (or None if unset) after checking its scheme."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    scheme = urlparse(raw).scheme
    if scheme not in schemes:
        raise ConfigError(
            f"{name}={raw!r}: scheme must be one of {sorted(schemes)}, got {scheme!r}"
        )
    return raw


def env_dir(name: str, default: str | None) -> str | None:
    """A directory path; it need not exist (callers say what is missing)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return os.path.abspath(os.path.expanduser(raw))
