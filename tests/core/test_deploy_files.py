"""The image and compose file run the service as an unprivileged account and restart what
exits; the Celery stack is pinned to versions that survive a Redis restart (no Docker daemon
is needed: the files are read)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
yaml = pytest.importorskip("yaml")


def test_the_image_runs_as_a_non_root_account() -> None:
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users, "the Dockerfile has no USER: everything would run as root"
    assert users[-1].split(":")[0] not in ("root", "0")
    assert lines.index(next(x for x in lines if x.startswith("USER "))) > max(
        i for i, x in enumerate(lines) if x.startswith("RUN ")
    )  # after the last RUN: the service itself never runs as root


def test_compose_restarts_every_service_and_runs_ours_unprivileged() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name, service in services.items():
        assert service.get("restart") in ("always", "unless-stopped"), name
    for name in ("web", "worker"):
        user = str(services[name].get("user", ""))
        assert user and user.split(":")[0] not in ("root", "0"), name


def test_celery_kombu_and_redis_are_pinned_to_the_combination_that_reconnects() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = {re.split(r"[\[=<>]", d)[0]: d for d in deps}
    assert pins["celery"] == "celery[redis]==5.6.3"  # 5.7.0 dies on a Redis restart
    assert pins["kombu"] == "kombu==5.6.2" and pins["redis"] == "redis==6.4.0"
