"""Django's SECRET_KEY: from the environment, else one generated per installation.

With ``QUEUECAST_DEBUG`` off a weak key stops start-up: shorter than 50 characters, fewer
than 5 distinct characters, Django's ``django-insecure-`` prefix, or a value from a
template (``change-me``, the old development key). Without ``QUEUECAST_SECRET_KEY`` a
random key is created once in ``QUEUECAST_SECRET_KEY_FILE`` (mode 0600) and reused, so
every process of one installation signs sessions alike and no default key exists.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from queuecast.env import ConfigError

KNOWN_DEFAULTS = {
    "change-me",
    "changeme",
    "secret",
    "queuecast-insecure-development-key",
}
MIN_LENGTH, MIN_DISTINCT = 50, 5


def weakness(key: str) -> str | None:
    """Why ``key`` must not sign anything in production (None if it is fine)."""
    if key.strip().lower() in KNOWN_DEFAULTS:
        return "it is a default value from a template"
    if key.startswith("django-insecure"):
        return "it is a django-insecure development key"
    if len(key) < MIN_LENGTH:
        return f"it has {len(key)} characters, fewer than {MIN_LENGTH}"
    if len(set(key)) < MIN_DISTINCT:
        return f"it has fewer than {MIN_DISTINCT} distinct characters"
    return None


def resolve(env_value: str, *, debug: bool, key_file: Path) -> str:
    if env_value:
        problem = weakness(env_value)
        if problem and not debug:
            raise ConfigError(
                f"QUEUECAST_SECRET_KEY is weak ({problem}); with QUEUECAST_DEBUG off use e.g. "
                "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`"
            )
        return env_value
    try:
        return _from_file(key_file)
    except OSError as exc:
        raise ConfigError(
            f"QUEUECAST_SECRET_KEY is not set and {key_file} cannot be created ({exc}); "
            "set QUEUECAST_SECRET_KEY or QUEUECAST_SECRET_KEY_FILE"
        ) from exc


def _from_file(path: Path) -> str:
    if path.is_file():
        key = path.read_text().strip()
        if key and not weakness(key):
            return key
    key = secrets.token_urlsafe(50)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    return key
