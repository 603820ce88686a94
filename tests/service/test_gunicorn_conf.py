"""The gunicorn configuration: one private control socket per instance, and a request
timeout that no longer has to cover a long run."""

from __future__ import annotations

import importlib
import os
import stat

import pytest

import queuecast.gunicorn_conf


def load(monkeypatch, **env: str):
    for name in ("QUEUECAST_CONTROL_SOCKET", "CELERY_BROKER_URL", "QUEUECAST_EMBEDDED_RUNS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return importlib.reload(queuecast.gunicorn_conf)


def test_each_bind_address_gets_its_own_control_socket_in_a_private_folder(
    monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    one = load(monkeypatch, QUEUECAST_BIND="127.0.0.1:8200").control_socket
    two = load(monkeypatch, QUEUECAST_BIND="127.0.0.1:8201").control_socket
    assert one != two and os.path.dirname(one) == os.path.dirname(two)
    folder = os.lstat(os.path.dirname(one))
    assert stat.S_IMODE(folder.st_mode) == 0o700 and folder.st_uid == os.getuid()
    # A unix socket path has 108 bytes: the name stays short whatever the bind.
    unix = load(monkeypatch, QUEUECAST_BIND="unix:/run/qc/" + "x" * 200 + ".sock")
    assert len(os.path.basename(unix.control_socket)) <= 48


def test_the_control_socket_can_be_set_or_turned_off(monkeypatch, tmp_path) -> None:
    path = str(tmp_path / "mine.ctl")
    assert load(monkeypatch, QUEUECAST_CONTROL_SOCKET=path).control_socket == path
    assert load(monkeypatch, QUEUECAST_CONTROL_SOCKET="off").control_socket_disable is True


def test_a_shared_or_foreign_socket_folder_is_refused(monkeypatch, tmp_path) -> None:
    folder = tmp_path / f"queuecast-gunicorn-{os.getuid()}"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    with pytest.raises(RuntimeError, match="not a private folder"):
        load(monkeypatch)
    folder.chmod(0o700)


def test_runs_off_the_request_keep_the_short_request_timeout(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv("QUEUECAST_WEB_TIMEOUT_S", raising=False)
    monkeypatch.delenv("QUEUECAST_RUN_TIME_LIMIT_S", raising=False)
    assert load(monkeypatch).timeout == 60
    assert load(monkeypatch, QUEUECAST_EMBEDDED_RUNS="inline").timeout == 4 * 3600
    assert load(monkeypatch, CELERY_BROKER_URL="redis://x:6379/0").timeout == 60
