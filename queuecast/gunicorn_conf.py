"""Gunicorn settings of the production server (``scripts/serve``, docker-compose.yml).

Each variable can be overridden from the environment: ``QUEUECAST_WEB_WORKERS`` (default:
the CPU count), ``QUEUECAST_WEB_THREADS`` (4), ``QUEUECAST_WEB_TIMEOUT_S``. Long runs never
run inside a request (a broker's worker, or in the embedded mode a background process:
``queuecast/background.py``), so the request timeout is 60 s; only
``QUEUECAST_EMBEDDED_RUNS=inline`` runs them inside the request, and then the timeout is
the run time limit.

The control socket (``gunicornc``) is one per instance: named after the bind address, in a
private folder (mode 0700, ours), so two servers under one account never share or remove
each other's. ``QUEUECAST_CONTROL_SOCKET`` sets the path; ``off`` disables it.
"""

import hashlib
import os
import re
import stat
import tempfile

_cores = os.cpu_count() or 1
_inline_runs = not os.environ.get("CELERY_BROKER_URL") and (
    os.environ.get("QUEUECAST_EMBEDDED_RUNS", "process") == "inline"
)


def private_dir(parent: str) -> str:
    """``parent/queuecast-gunicorn-<uid>``, created 0700; refused unless ours and private."""
    path = os.path.join(parent, f"queuecast-gunicorn-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise RuntimeError(f"{path} is not a private folder of this user (mode 0700)")
    return path


def control_socket_path(bind_address: str) -> str:
    """This instance's control socket: one per bind address (short: sun_path is 108 bytes)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    label = re.sub(r"[^A-Za-z0-9._-]", "_", bind_address)[:32]
    digest = hashlib.sha256(bind_address.encode()).hexdigest()[:8]
    return os.path.join(private_dir(runtime), f"{label}-{digest}.ctl")


bind = os.environ.get("QUEUECAST_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("QUEUECAST_WEB_WORKERS", _cores))
threads = int(os.environ.get("QUEUECAST_WEB_THREADS", 4))
worker_class = "gthread"
timeout = int(
    os.environ.get(
        "QUEUECAST_WEB_TIMEOUT_S",
        os.environ.get("QUEUECAST_RUN_TIME_LIMIT_S", 4 * 3600) if _inline_runs else 60,
    )
)
graceful_timeout = 30
keepalive = 5
# No max_requests: recycling a worker throws away its fitted models (a refit takes 15 s+,
# and requests queued behind it wait that long).
accesslog = os.environ.get("QUEUECAST_ACCESS_LOG", "-")
errorlog = "-"
forwarded_allow_ips = os.environ.get("QUEUECAST_FORWARDED_ALLOW_IPS", "127.0.0.1")
_control = os.environ.get("QUEUECAST_CONTROL_SOCKET", "")
control_socket_disable = _control.lower() == "off"
control_socket = _control if _control and not control_socket_disable else control_socket_path(bind)
control_socket_mode = 0o600
