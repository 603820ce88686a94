"""Settings read the environment through typed helpers that fail loudly (queuecast/env.py)."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from queuecast.env import ConfigError, env_bool, env_int, env_url

ROOT = Path(__file__).resolve().parents[2]


def test_env_int_names_the_variable_on_a_bad_value(monkeypatch) -> None:
    monkeypatch.setenv("QC_TEST_INT", "5l2")
    with pytest.raises(ConfigError, match="QC_TEST_INT='5l2'"):
        env_int("QC_TEST_INT", 1)
    monkeypatch.setenv("QC_TEST_INT", "0")
    with pytest.raises(ConfigError, match=">= 1"):
        env_int("QC_TEST_INT", 1, minimum=1)


def test_env_bool_and_url_reject_unknown_values(monkeypatch) -> None:
    monkeypatch.setenv("QC_TEST_BOOL", "maybe")
    with pytest.raises(ConfigError, match="QC_TEST_BOOL"):
        env_bool("QC_TEST_BOOL", False)
    monkeypatch.setenv("QC_TEST_URL", "mysql://x/y")
    with pytest.raises(ConfigError, match="scheme"):
        env_url("QC_TEST_URL", {"postgres"})


def test_unset_variables_give_the_defaults(monkeypatch) -> None:
    for name in ("QC_TEST_INT", "QC_TEST_BOOL", "QC_TEST_URL"):
        monkeypatch.delenv(name, raising=False)
    assert env_int("QC_TEST_INT", 7) == 7
    assert env_bool("QC_TEST_BOOL", True) is True
    assert env_url("QC_TEST_URL", {"postgres"}) is None


def _settings_in_subprocess(**env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='queuecast.settings'; "
        "from django.conf import settings; "
        "print(settings.DATABASES['default']['ENGINE'], settings.CELERY_TASK_ALWAYS_EAGER)"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**clean, **env},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_embedded_default_is_sqlite_with_eager_tasks() -> None:
    done = _settings_in_subprocess()
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["django.db.backends.sqlite3", "True"]


def test_environment_switches_to_postgres_and_a_real_broker() -> None:
    done = _settings_in_subprocess(
        DATABASE_URL="postgres://u@127.0.0.1:5432/x", CELERY_BROKER_URL="redis://127.0.0.1:6379/0"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["django.db.backends.postgresql", "False"]


def test_a_bad_setting_stops_start_up_with_its_name() -> None:
    done = _settings_in_subprocess(QUEUECAST_MAX_UPLOAD_MB="lots")
    assert done.returncode != 0
    assert "QUEUECAST_MAX_UPLOAD_MB='lots'" in done.stderr


def _setting(name: str, **env: str) -> subprocess.CompletedProcess:
    # the embedded default: none of the caller's QUEUECAST_*, DATABASE_URL or broker settings
    ours = ("QUEUECAST_", "DATABASE_URL", "CELERY_BROKER_URL")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(ours) or k in env}
    code = (
        "import os; os.environ['DJANGO_SETTINGS_MODULE']='queuecast.settings'; "
        f"from django.conf import settings; print(repr(settings.{name}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**clean, **env},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_debug_is_off_unless_asked_for(tmp_path) -> None:
    key_file = str(tmp_path / "key")
    assert _setting("DEBUG", QUEUECAST_SECRET_KEY_FILE=key_file).stdout.strip() == "False"
    on = _setting("DEBUG", QUEUECAST_DEBUG="1", QUEUECAST_SECRET_KEY_FILE=key_file)
    assert on.stdout.strip() == "True"


@pytest.mark.parametrize(
    "key", ["change-me", "queuecast-insecure-development-key", "short-but-random-Zq81", "a" * 60]
)
def test_a_weak_secret_key_with_debug_off_stops_start_up(key: str) -> None:
    done = _setting("SECRET_KEY", QUEUECAST_SECRET_KEY=key, QUEUECAST_DEBUG="0")
    assert done.returncode != 0 and "QUEUECAST_SECRET_KEY is weak" in done.stderr
    allowed = _setting("SECRET_KEY", QUEUECAST_SECRET_KEY=key, QUEUECAST_DEBUG="1")
    assert allowed.returncode == 0  # development may use anything


def test_without_a_key_one_random_key_is_made_once_per_installation(tmp_path) -> None:
    key_file = tmp_path / "secret"
    first = _setting("SECRET_KEY", QUEUECAST_SECRET_KEY_FILE=str(key_file))
    second = _setting("SECRET_KEY", QUEUECAST_SECRET_KEY_FILE=str(key_file))
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout and len(first.stdout.strip().strip("'")) >= 50
    assert key_file.stat().st_mode & 0o777 == 0o600


def test_embedded_sqlite_uses_wal_and_immediate_transactions(tmp_path) -> None:
    done = _setting(
        "DATABASES['default']['OPTIONS']", QUEUECAST_SECRET_KEY_FILE=str(tmp_path / "k")
    )
    options = ast.literal_eval(done.stdout.strip())
    assert (
        options["transaction_mode"] == "IMMEDIATE" and "journal_mode=WAL" in options["init_command"]
    )
