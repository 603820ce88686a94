"""Gunicorn settings of the production server (``scripts/serve``, docker-compose.yml).

Each variable can be overridden from the environment: ``QUEUECAST_WEB_WORKERS`` (default:
the CPU count), ``QUEUECAST_WEB_THREADS`` (4), ``QUEUECAST_WEB_TIMEOUT_S``. In the embedded
mode (no broker) ingests and evaluations run inside the request, so the request timeout
defaults to the run time limit; with a broker the web only answers quick requests (60 s).
"""

import os

_cores = os.cpu_count() or 1
_embedded = not os.environ.get("CELERY_BROKER_URL")

bind = os.environ.get("QUEUECAST_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("QUEUECAST_WEB_WORKERS", _cores))
threads = int(os.environ.get("QUEUECAST_WEB_THREADS", 4))
worker_class = "gthread"
timeout = int(
    os.environ.get(
        "QUEUECAST_WEB_TIMEOUT_S",
        os.environ.get("QUEUECAST_RUN_TIME_LIMIT_S", 4 * 3600) if _embedded else 60,
    )
)
graceful_timeout = 30
keepalive = 5
# No max_requests: recycling a worker throws away its fitted models (a refit takes 15 s+,
# and requests queued behind it wait that long).
accesslog = os.environ.get("QUEUECAST_ACCESS_LOG", "-")
errorlog = "-"
forwarded_allow_ips = os.environ.get("QUEUECAST_FORWARDED_ALLOW_IPS", "127.0.0.1")
