"""Django settings, read from the environment (see ``queuecast/env.py``).

No environment gives the embedded default: a SQLite file beside the project and
Celery tasks run in-process. ``DATABASE_URL=postgres://...`` switches to
PostgreSQL, ``CELERY_BROKER_URL=redis://...`` to a real broker and worker.
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url

from queuecast import secret_key
from queuecast.client_address import proxy_networks
from queuecast.env import (
    ConfigError,
    env_bool,
    env_dir,
    env_int,
    env_list,
    env_str,
    env_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent

# Off unless asked for: a 500 page with DEBUG on shows the settings (DATABASE_URL, ...).
DEBUG = env_bool("QUEUECAST_DEBUG", False)
# A weak key with DEBUG off stops start-up; unset: one random key per installation.
SECRET_KEY = secret_key.resolve(
    env_str("QUEUECAST_SECRET_KEY", ""),
    debug=DEBUG,
    key_file=Path(env_str("QUEUECAST_SECRET_KEY_FILE", str(BASE_DIR / ".secret_key"))),
)
ALLOWED_HOSTS = env_list("QUEUECAST_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and ReDoc from our own static files (no CDN)
    "queuecast",
    "traces",
    "predictor",
    "jobmolding",
    "holdqueue",
    "pyss_adapter",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "queuecast.middleware.BodySizeMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "queuecast.reaper.ReaperMiddleware",
]

ROOT_URLCONF = "queuecast.urls"
WSGI_APPLICATION = "queuecast.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# --- database -----------------------------------------------------------------
_database_url = env_url("DATABASE_URL", {"postgres", "postgresql", "sqlite"})
if _database_url:
    DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=60)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("QUEUECAST_SQLITE_PATH", str(BASE_DIR / "queuecast.sqlite3")),
            # Kept per thread as with PostgreSQL: opening one (and its PRAGMAs) cost ~1.3 ms
            # of every API request (docs/results.md, "Speed", third round).
            "CONN_MAX_AGE": 60,
            # Parallel writers: WAL lets readers run beside the writer, and IMMEDIATE
            # transactions take the write lock at BEGIN, so the 30 s busy timeout applies
            # (a deferred transaction upgrading to write fails at once: "database is locked").
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
# Set by the web process for the background process of a long run (queuecast/background.py):
# the same database, even when it is a test run's.
if env_str("QUEUECAST_DATABASE_NAME", ""):
    DATABASES["default"]["NAME"] = env_str("QUEUECAST_DATABASE_NAME", "")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# WhiteNoise serves the collected files (``manage.py collectstatic``, done by scripts/serve).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Headers: no sniffing, no framing, no referrer off-site; HTTPS-only cookies when served so.
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
_HTTPS = env_bool("QUEUECAST_HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = _HTTPS
if _HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
STATICFILES_DIRS = [BASE_DIR / "static"]  # our CSS/JS and vendored chart library
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# --- uploads ------------------------------------------------------------------
QUEUECAST_MAX_UPLOAD_MB = env_int("QUEUECAST_MAX_UPLOAD_MB", 512, minimum=1)
QUEUECAST_MAX_UPLOAD_BYTES = QUEUECAST_MAX_UPLOAD_MB * 1024 * 1024
QUEUECAST_MAX_TRACES_PER_USER = env_int("QUEUECAST_MAX_TRACES_PER_USER", 100, minimum=1)
# The SWF reader's limits, enforced while streaming (traces/core/swf_limits.py).
QUEUECAST_MAX_JOBS_PER_TRACE = env_int("QUEUECAST_MAX_JOBS_PER_TRACE", 2_000_000, minimum=1)
QUEUECAST_MAX_DECOMPRESSED_MB = env_int("QUEUECAST_MAX_DECOMPRESSED_MB", 1024, minimum=1)
QUEUECAST_MAX_LINE_BYTES = env_int("QUEUECAST_MAX_LINE_BYTES", 4096, minimum=256)
QUEUECAST_MAX_LINES = env_int("QUEUECAST_MAX_LINES", 3_000_000, minimum=1)
QUEUECAST_MAX_HEADER_KB = env_int("QUEUECAST_MAX_HEADER_KB", 64, minimum=1)
QUEUECAST_MAX_SPAN_DAYS = env_int("QUEUECAST_MAX_SPAN_DAYS", 7305, minimum=1)
QUEUECAST_MAX_REQUESTED_DAYS = env_int("QUEUECAST_MAX_REQUESTED_DAYS", 7305, minimum=1)
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024  # larger uploads spill to a temp file
DATA_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024
QUEUECAST_UPLOAD_DIR = env_dir("QUEUECAST_UPLOAD_DIR", str(BASE_DIR / "uploads"))
# Fitted models shared by every process (predictor/services/fitted_store.py; default:
# ``fitted`` in the upload folder) and how long the request that starts a model's first fit
# waits for it before answering 503 "being fitted" (predictor/services/background_fit.py).
QUEUECAST_FITTED_DIR = env_dir("QUEUECAST_FITTED_DIR", None)
QUEUECAST_FIT_WAIT_S = env_int("QUEUECAST_FIT_WAIT_S", 5, minimum=0)
# After a trace's background fit, its child predicts every row once (manage.py fit_model).
QUEUECAST_WARM_AFTER_FIT = env_bool("QUEUECAST_WARM_AFTER_FIT", True)

# Real PWA traces used by tests and benchmarks (never committed): one setting.
QUEUECAST_TRACES_DIR = env_dir("QUEUECAST_TRACES_DIR", str(BASE_DIR.parent / "shared" / "traces"))
# Where fetch_trace downloads from: the Parallel Workloads Archive's URL pattern.
QUEUECAST_PWA_BASE_URL = env_str(
    "QUEUECAST_PWA_BASE_URL", "https://www.cs.huji.ac.il/labs/parallel/workload"
)

# --- REST framework -----------------------------------------------------------
REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header makes "not logged in" a 401, as documented
    # (with the session class first DRF answers 403 to everyone).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [  # JSON nested too deeply: 400, not RecursionError
        "queuecast.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "queuecast.errors.exception_handler",
    # Only logins are throttled (queuecast/auth.py): password guessing, both paths.
    "DEFAULT_THROTTLE_RATES": {
        "login": env_str("QUEUECAST_LOGIN_RATE", env_str("QUEUECAST_TOKEN_RATE", "10/min"))
    },
}

# --- throttle counts, shared by every web worker ----------------------------------------------
# A proxy's X-Forwarded-For is believed only from these peers (queuecast/client_address.py).
QUEUECAST_TRUSTED_PROXIES = [
    str(n) for n in proxy_networks(env_list("QUEUECAST_TRUSTED_PROXIES", []))
]
# Redis when there is one (QUEUECAST_CACHE_URL, else a redis CELERY_BROKER_URL); otherwise
# files in a private folder beside the database, which every gunicorn worker of this
# checkout shares (a per-process memory cache would give each worker its own budget).
_cache_url = env_url("QUEUECAST_CACHE_URL", {"redis", "rediss"})
_broker = env_url("CELERY_BROKER_URL", {"redis", "rediss", "amqp", "memory"}) or ""
_cache_url = _cache_url or (_broker if _broker.startswith(("redis:", "rediss:")) else None)
QUEUECAST_CACHE_DIR = env_dir("QUEUECAST_CACHE_DIR", str(BASE_DIR / ".cache"))


def _shared_cache(name: str, **options: object) -> dict[str, object]:
    """A cache every process shares: Redis when there is one, else files in ``name`` under
    ``QUEUECAST_CACHE_DIR``."""
    if _cache_url:
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _cache_url,
            "KEY_PREFIX": f"qc-{name}",
        }
    return {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(Path(QUEUECAST_CACHE_DIR) / name),
        **({"OPTIONS": options} if options else {}),
    }


CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "throttle": _shared_cache("throttle"),
    # each live site's batch queue as last read (holdqueue/services/queue_view.py)
    "sites": _shared_cache("sites", MAX_ENTRIES=10000),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Queuecast API",
    "DESCRIPTION": "Queue-wait and runtime prediction for supercomputer jobs.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "queuecast.schema.document_error_responses",  # 400/401/403/404/409/413/429/503
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Celery -------------------------------------------------------------------
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", {"redis", "rediss", "amqp", "memory"})
CELERY_RESULT_BACKEND = env_url("CELERY_RESULT_BACKEND", {"redis", "rediss", "db", "rpc"})
# Embedded default: no broker configured -> tasks run in-process, eagerly.
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", CELERY_BROKER_URL is None)
CELERY_TASK_EAGER_PROPAGATES = True
# Embedded mode: each long run in a background process of its own (queuecast/background.py),
# at most QUEUECAST_EMBEDDED_MAX_RUNS at once; "inline" runs it inside the request instead.
QUEUECAST_EMBEDDED_RUNS = env_str("QUEUECAST_EMBEDDED_RUNS", "process")
if QUEUECAST_EMBEDDED_RUNS not in ("process", "inline"):
    raise ConfigError(f"QUEUECAST_EMBEDDED_RUNS={QUEUECAST_EMBEDDED_RUNS!r}: process or inline")
QUEUECAST_EMBEDDED_MAX_RUNS = env_int("QUEUECAST_EMBEDDED_MAX_RUNS", 2, minimum=1)
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the message for another
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# With acks_late, Redis hands a message to another worker after this many seconds
# unacknowledged (a killed worker's ingest is retried; claims make a duplicate harmless).
# Short is safe: a redelivered message finds its row leased by a live worker and stops
# (queuecast/longrun.py), so only a dead worker's message is run again.
QUEUECAST_CELERY_VISIBILITY_TIMEOUT = env_int(
    "QUEUECAST_CELERY_VISIBILITY_TIMEOUT", 300, minimum=60
)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": QUEUECAST_CELERY_VISIBILITY_TIMEOUT}
# A broker that goes away (a Redis restart) is waited for, at start-up and later, for ever:
# the worker and its beat must outlive it (docs/operations.md, compose adds `restart:`).
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None

# --- long-run lifecycle (queuecast/longrun.py, docs/operations.md) --------------------------
QUEUECAST_RUN_HEARTBEAT_S = env_int("QUEUECAST_RUN_HEARTBEAT_S", 10, minimum=1)
QUEUECAST_RUN_STALE_S = env_int("QUEUECAST_RUN_STALE_S", 60, minimum=2)
QUEUECAST_REAP_INTERVAL_S = env_int("QUEUECAST_REAP_INTERVAL_S", 15, minimum=1)
QUEUECAST_RUN_TIME_LIMIT_S = env_int("QUEUECAST_RUN_TIME_LIMIT_S", 4 * 3600, minimum=1)
QUEUECAST_RUN_MEMORY_MB = env_int("QUEUECAST_RUN_MEMORY_MB", 4096, minimum=64)
QUEUECAST_EVAL_CHUNK_ROWS = env_int("QUEUECAST_EVAL_CHUNK_ROWS", 5000, minimum=100)
if QUEUECAST_RUN_STALE_S <= 2 * QUEUECAST_RUN_HEARTBEAT_S:
    raise ConfigError("QUEUECAST_RUN_STALE_S must be more than twice QUEUECAST_RUN_HEARTBEAT_S")
CELERY_BEAT_SCHEDULE = {
    "reap-runs": {"task": "queuecast.tasks.reap_runs", "schedule": QUEUECAST_REAP_INTERVAL_S}
}

# --- live sites and the hold queue (holdqueue/, docs/sites.md) -----------------------------
QUEUECAST_HOLD_SWEEP_S = env_int("QUEUECAST_HOLD_SWEEP_S", 5, minimum=1)
QUEUECAST_SITE_SYNC_S = env_int("QUEUECAST_SITE_SYNC_S", 60, minimum=1)
# An answer about a site "now" reads its batch queue as asked at most this many seconds (of
# the site's clock) before, unless Queuecast changed it since; 0 asks on every request.
QUEUECAST_QUEUE_VIEW_S = env_int("QUEUECAST_QUEUE_VIEW_S", 5, minimum=0)
QUEUECAST_SUBMIT_LEASE_S = env_int("QUEUECAST_SUBMIT_LEASE_S", 60, minimum=5)
QUEUECAST_RELEASE_ATTEMPTS = env_int("QUEUECAST_RELEASE_ATTEMPTS", 3, minimum=1)
QUEUECAST_RELEASE_RETRY_S = env_int("QUEUECAST_RELEASE_RETRY_S", 30, minimum=1)
QUEUECAST_MAX_SCRIPT_BYTES = env_int("QUEUECAST_MAX_SCRIPT_BYTES", 65536, minimum=64)
QUEUECAST_MAX_TIME_LIMIT_S = env_int("QUEUECAST_MAX_TIME_LIMIT_S", 30 * 86400, minimum=60)
# A held job's Celery ETA task is queued only when its release is this close: Redis hands an
# unacknowledged message out again every visibility timeout, so a longer ETA would be
# redelivered (and held in memory) once per timeout. The sweep queues it when it gets close.
QUEUECAST_RELEASE_TASK_HORIZON_S = QUEUECAST_CELERY_VISIBILITY_TIMEOUT // 2
# Threads of the embedded sweeper (manage.py sweep_holdqueue --loop): one hung sbatch holds one.
QUEUECAST_SWEEP_THREADS = env_int("QUEUECAST_SWEEP_THREADS", 4, minimum=1)
CELERY_BEAT_SCHEDULE["sweep-holdqueue"] = {
    "task": "holdqueue.tasks.sweep_holdqueue",
    "schedule": QUEUECAST_HOLD_SWEEP_S,
}
# The queue tasks (and beat's sweeps) go to; tests give a worker a private one.
CELERY_TASK_DEFAULT_QUEUE = env_str("QUEUECAST_CELERY_QUEUE", "celery")
if CELERY_BROKER_URL is None:
    CELERY_BROKER_URL = "memory://"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("QUEUECAST_LOG_LEVEL", "WARNING")},
}
