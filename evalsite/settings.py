"""Atelier settings: one file, driven by environment variables.

Every knob that differs between a laptop demo and a deployment is read from the
environment through the small typed readers below, which fail loudly on a value
they cannot parse. With nothing set, the site runs on SQLite under ``var/`` and
Celery tasks run in-process (eagerly).
"""

from __future__ import annotations

import logging
import os
import re
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true/false)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} is below its minimum {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_database_url(name: str, default: str) -> str:
    """A database URL dj-database-url can parse; its own errors are a traceback naming neither the variable
    nor the form it wants."""
    raw = os.environ.get(name) or default
    try:
        dj_database_url.parse(raw)
    except (ValueError, dj_database_url.UnknownSchemeError) as exc:  # ParseError is a ValueError
        # The value is not repeated: it may hold the database's password.
        raise ImproperlyConfigured(
            f"{name} is not a database URL (e.g. postgres://user:password@host:5432/name "
            f"or sqlite:////absolute/path.sqlite3): {exc}") from exc
    return raw


def env_broker_url(name: str) -> str:
    """Empty (tasks run in-process) or URLs of transports kombu knows, ``;``-separated for failover.
    kombu reads a value without a scheme as an AMQP host name, so a typo would queue runs that no
    worker ever receives instead of refusing to start."""
    from kombu.transport import TRANSPORT_ALIASES

    raw = os.environ.get(name, "")
    for url in filter(None, (part.strip() for part in raw.split(";"))):
        scheme = url.partition("://")[0].partition("+")[0] if "://" in url else ""
        if scheme not in TRANSPORT_ALIASES:
            # Only the scheme is repeated: the rest may hold the broker's password.
            raise ImproperlyConfigured(
                f"{name} does not name a broker transport (scheme {scheme!r}; e.g. redis://127.0.0.1:6379/0); "
                f"unset it to run tasks in-process")
    return raw


def env_rate(name: str, default: str) -> str:
    """A request rate as DRF's throttles read it, ``<count>/<second|minute|hour|day>``; anything else
    would be a 500 on the first throttled request instead of a refusal at start."""
    raw = os.environ.get(name) or default
    if not re.fullmatch(r"\d+/[smhd][a-z]*", raw.strip()):
        raise ImproperlyConfigured(f"{name}={raw!r} is not a rate (use <count>/<second|minute|hour|day>, "
                                   f"e.g. 60/minute)")
    return raw.strip()


def env_log_level(name: str, default: str) -> str:
    """A logging level name; logging's own refusal comes later, as a traceback without the variable's name."""
    raw = os.environ.get(name) or default
    if not isinstance(logging.getLevelName(raw.strip().upper()), int):
        raise ImproperlyConfigured(f"{name}={raw!r} is not a logging level (DEBUG, INFO, WARNING, ERROR, CRITICAL)")
    return raw.strip().upper()


DEBUG = env_bool("DEBUG", False)
# A development environment is said explicitly (`make demo`, the tests); anything else is treated as
# production: secure cookies, HTTPS redirect, and no start without a real SECRET_KEY.
ATELIER_DEV = env_bool("ATELIER_DEV", False)
# A reverse proxy in front sets X-Forwarded-Proto and X-Forwarded-For; they are believed only when
# this says one is there (a client reaching gunicorn directly could forge them).
ATELIER_BEHIND_PROXY = env_bool("ATELIER_BEHIND_PROXY", False)
#: The repository's key, for development only; `check --deploy` flags it (evalsite/checks.py).
DEVELOPMENT_SECRET_KEY = "atelier-insecure-development-key-do-not-use-in-production-0123456789"
SECRET_KEY = env_str("SECRET_KEY") or (DEVELOPMENT_SECRET_KEY if DEBUG or ATELIER_DEV else "")
if not SECRET_KEY:
    # One line that names both ways out: manage.py prints it as is (no traceback).
    raise ImproperlyConfigured(
        "SECRET_KEY is not set: set SECRET_KEY to a long random string for a deployment, "
        "or run `export ATELIER_DEV=true` on a development machine (uses the repository's development key)"
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "csp",
    "django_prometheus",
    "evalsite",
    "leaderboard",
    "leaderboard.easel",
    "leaderboard.c2",
    "leaderboard.bundles",
    "annotation",
    "leaderboard.api_tokens",
]

MIDDLEWARE = [
    # First and last: request counts and latencies for /metrics, django-prometheus's series counted with
    # each series looked up once (evalsite/request_metrics.py).
    "evalsite.request_metrics.CountedBeforeMiddleware",
    # An address over 5,000 characters is a 414 for every visitor, before any redirect would carry it
    # (evalsite/request_checks.py).
    "evalsite.request_checks.RefuseLongAddresses",
    "django.middleware.security.SecurityMiddleware",
    # A body over ATELIER_MAX_UPLOAD_BYTES is a 413 before anything reads it (evalsite/upload_limits.py).
    "evalsite.upload_limits.RefuseOversizedUploads",
    # django-csp's, with the headers built from the settings once (evalsite/content_security_policy.py).
    "evalsite.content_security_policy.SitePolicyCSPMiddleware",
    "evalsite.static_files.StaticFilesMiddleware",  # WhiteNoise; no warning for an uncollected dev folder
    # A NUL in a path, query, form field or cookie, or a query or form in a charset other than UTF-8 (set
    # aside by evalsite/wsgi.py), is a 400 before any view or session lookup; an integer path parameter no id
    # column can hold is a 404.
    "evalsite.request_checks.RefuseUnstorableInput",
    # An MTurk study's pages run in MTurk's frame: their session and CSRF cookies are SameSite=None (above
    # the session and CSRF middleware, to see the cookies they set).
    "evalsite.middleware.FramedStudyCookies",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "evalsite.middleware.LoginRequiredEverywhere",
    # Django's message storage, made when a request first uses it (evalsite/messages_on_use.py).
    "evalsite.messages_on_use.MessagesOnUse",
    # A visit to a POST-only address: the site's 405 page, not the browser's blank one (evalsite/middleware.py).
    "evalsite.middleware.MethodNotAllowedPage",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a locked-out login into its 429 answer.
    "axes.middleware.AxesMiddleware",
    "evalsite.request_metrics.SeriesKeptAfterMiddleware",
]

ROOT_URLCONF = "evalsite.urls"
WSGI_APPLICATION = "evalsite.wsgi.application"

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
                "leaderboard.context_processors.roles",
                "annotation.viewer.viewer",
            ],
        },
    },
]

VAR_DIR = Path(env_str("ATELIER_VAR_DIR", str(BASE_DIR / "var")))
DATABASES = {
    "default": dj_database_url.parse(
        env_database_url("DATABASE_URL", f"sqlite:///{VAR_DIR / 'atelier.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        # A kept connection is tested before a request reuses it: after a database restart the first
        # request reconnects instead of failing on the dead socket. On PostgreSQL the test looks at the idle
        # socket first and sends SELECT 1 only when something waits there (evalsite/db_backends/postgresql).
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # A database host that does not answer fails the request in seconds (a 503, evalsite/error_pages.py)
    # instead of holding the worker for TCP's minutes.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env_int("DATABASE_CONNECT_TIMEOUT", 5, minimum=1))
# The annotator endpoints' few hot statements are prepared on PostgreSQL (evalsite/prepared_statements.py):
# off behind a transaction-mode pooler that cannot keep a connection's prepared statements.
ATELIER_DB_PREPARED_STATEMENTS = env_bool("ATELIER_DB_PREPARED_STATEMENTS", True)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # SQLite serialises writers; wait for the lock instead of failing at once. A transaction takes the
    # write lock when it begins (IMMEDIATE): one that read first and then asked for it while another
    # wrote would fail at once with "database is locked" (SQLite does not wait where waiting could
    # deadlock), e.g. a page starting a run while a run started in this process stores its work.
    DATABASES["default"].setdefault("OPTIONS", {}).update(timeout=20, transaction_mode="IMMEDIATE")
    DATABASES["default"]["CONN_MAX_AGE"] = 0
# Test databases are per process, so that two test runs on one machine never share one.
DATABASES["default"]["TEST"] = {"NAME": env_str("TEST_DATABASE_NAME") or f"test_atelier_{os.getpid()}"}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The same backends, wrapped by django-prometheus to count queries, errors and connections for /metrics.
# PostgreSQL: django-prometheus's counted backend, its per-request health check asking the socket first
# (evalsite/db_backends/postgresql/base.py).
_COUNTED_BACKENDS = {"django.db.backends.postgresql": "evalsite.db_backends.postgresql",
                     "django.db.backends.sqlite3": "django_prometheus.db.backends.sqlite3"}
DATABASES["default"]["ENGINE"] = _COUNTED_BACKENDS.get(DATABASES["default"]["ENGINE"], DATABASES["default"]["ENGINE"])

# Login throttling (django-axes): failed logins are counted per account and, separately, per client
# address. After ATELIER_LOGIN_FAILURE_LIMIT failures that account or address is refused (HTTP 429,
# even with the right password) until ATELIER_LOGIN_COOLOFF_MINUTES have passed since the last
# failure; a successful login before the limit clears the count. The axes backend comes first so a
# locked-out login never reaches the password check.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, the session's user read with a precompiled statement (evalsite/auth_backends.py).
    # Sessions are tied to the backend that logged them in: one made under Django's own path logs in again.
    "evalsite.auth_backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("ATELIER_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("ATELIER_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
# The attempted username, cut to axes' column (a longer one was a 500 on PostgreSQL): evalsite/login_attempts.py.
AXES_USERNAME_CALLABLE = "evalsite.login_attempts.attempt_username"
if ATELIER_BEHIND_PROXY:
    # Behind the proxy every request comes from the proxy's address: count the client's instead.
    AXES_CLIENT_IP_CALLABLE = "evalsite.proxy.client_address"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    # Django's file system storage that removes a partial file when the disk fills (evalsite/storage.py).
    "default": {"BACKEND": "evalsite.storage.MediaStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if not DEBUG and env_bool("ATELIER_MANIFEST_STATIC", False)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
MEDIA_URL = "media/"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Security: on by default outside DEBUG so `manage.py check --deploy` passes.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG and not ATELIER_DEV)
# Probes and the Prometheus scraper ask over plain HTTP from inside the deployment.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
# X-Forwarded-Proto is believed only when ATELIER_BEHIND_PROXY says a reverse proxy is in front.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if ATELIER_BEHIND_PROXY else None
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG and not ATELIER_DEV)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
# Django's database sessions, read with one precompiled statement (evalsite/sessions.py).
SESSION_ENGINE = "evalsite.sessions"
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 60 * 60 * 12, minimum=60)
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy (django-csp): scripts, styles and images from our own origin only — no
# inline <script>, no event-handler attributes, no style="" attributes or <style> blocks (page data
# reaches scripts through json_script; styles are classes in static/css).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        # blob: only for the figure downloads' PNG: the chart's own SVG drawn onto a canvas (figure_downloads.js)
        "img-src": [SELF, "blob:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # One strict parser for every JSON endpoint: size, depth, type and content limits (evalsite/json_body.py).
    "DEFAULT_PARSER_CLASSES": ["evalsite.json_body.StrictJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

# /api/v1/ (issue 14): writes authenticated by an API token are throttled per user (reads and the pages'
# session requests are not); the schema and its docs are served from static files (no CDN under the CSP).
ATELIER_API_TOKEN_WRITE_RATE = env_rate("ATELIER_API_TOKEN_WRITE_RATE", "60/minute")
SPECTACULAR_SETTINGS = {
    "TITLE": "Atelier API",
    "DESCRIPTION": "Task sets, imports, runs (Ekphrasis judge runs, EASEL, C²), leaderboards, campaigns and "
                   "labels. Authenticate with `Authorization: Bearer <token>` (tokens: /account/api-tokens/) "
                   "or the site's session. Refusals: `{error, message, details}`.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs need a valid session or API token, as every other /api/v1/ address. The
    # defaults (AllowAny, session only) let any request that sent an Authorization header through:
    # LoginRequiredEverywhere leaves such requests to DRF to authenticate, and nothing here did.
    "SERVE_AUTHENTICATION": ["leaderboard.api_tokens.authentication.ApiTokenAuthentication",
                             "rest_framework.authentication.SessionAuthentication"],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["leaderboard.api_contract.schema_endpoints_v1"],
    # One name per distinct choice set (several models share a set, e.g. judge and C² run statuses).
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "leaderboard.runs.models.RunStatus",  # one Status for every kind of run
        "CallStatusEnum": "leaderboard.ekphrasis.models.Comparison.Status",
        "ComparisonKindEnum": "leaderboard.ekphrasis.models.Comparison.Kind",
        "EaselEpisodeStatusEnum": "leaderboard.easel.models.EaselEpisode.Status",
        "EaselEpisodeKindEnum": ["reconstruction", "semantic"],
        "EaselStepKindEnum": "leaderboard.easel.models.EaselStep.Kind",
        "C2SampleStatusEnum": "leaderboard.c2.models.C2Sample.Status",
        "CampaignStatusEnum": "annotation.models.Campaign.Status",
        "CampaignKindEnum": "annotation.choices.CampaignKind",
    },
}

# Celery: no broker configured -> tasks run in-process, eagerly, so the demo
# needs no Redis. Set CELERY_BROKER_URL=redis://... to use real workers.
CELERY_BROKER_URL = env_broker_url("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
# Without a broker, a page's Start or Resume runs the job in a thread of the web process, so the request
# returns at once and the run page follows it live (leaderboard/runs/lifecycle.py: the one start policy).
# false: inside the request (the tests' database is one transaction no other thread can see).
ATELIER_EAGER_JOBS_IN_BACKGROUND = env_bool("ATELIER_EAGER_JOBS_IN_BACKGROUND", True)
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or (CELERY_BROKER_URL or None)
# No task's result is read (a run's state is its rows). Kept, every send also subscribed to the result's
# channel on the Redis result backend, which against a silent Redis retried 20 times before failing.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True  # a killed worker's task is redelivered, not lost
# One queue name per deployment (or per test process, so that concurrent test runs sharing a Redis
# never take each other's messages).
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE") or "celery"
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# How long Redis waits before redelivering a task whose worker died without acknowledging it.
# kombu looks for such tasks every unacked_restore_interval seconds but scans Redis only on every
# unacked_restore_throttle-th look (defaults 10 and 10: a sweep every ~100 s, on top of the timeout).
# A broker that stops answering without closing the connection (a failover, a partition, a stopped process
# behind a live port) held every publish for ever — a page's Start with it (kombu's docs say as much): past
# CELERY_BROKER_SOCKET_TIMEOUT seconds a send fails as unreachable and the run waits queued
# (leaderboard/runs/queue.py). Workers are unaffected: their BRPOP answers within a second.
CELERY_BROKER_SOCKET_TIMEOUT = env_int("CELERY_BROKER_SOCKET_TIMEOUT", 2, minimum=1)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_timeout": CELERY_BROKER_SOCKET_TIMEOUT,
    "socket_connect_timeout": CELERY_BROKER_SOCKET_TIMEOUT,
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1),
    "unacked_restore_interval": env_int("CELERY_UNACKED_RESTORE_INTERVAL", 10, minimum=1),
    "unacked_restore_throttle": env_int("CELERY_UNACKED_RESTORE_THROTTLE", 10, minimum=1),
}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# The cache the dashboards are kept in (annotation.dashboard_cache; its keys name the state they
# show, so any backend is correct). ATELIER_CACHE_URL=redis://host:port/db shares it between worker
# processes; unset, each process keeps its own in memory.
ATELIER_CACHE_URL = env_str("ATELIER_CACHE_URL")
CACHES = {
    # django-prometheus's subclasses of Django's backends: hits and misses counted for /metrics.
    # A Redis that is away or silent is a cache miss after at most a second, not a 500 or a request held for
    # ever (django-redis's client has no timeout of its own): the dashboards are computed again, and the
    # counters kept in the cache (API write and study entry rates) let requests through meanwhile.
    "default": {"BACKEND": "django_prometheus.cache.backends.redis.RedisCache", "LOCATION": ATELIER_CACHE_URL,
                "KEY_PREFIX": env_str("ATELIER_CACHE_PREFIX", "atelier"),
                "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1, "IGNORE_EXCEPTIONS": True}}
    if ATELIER_CACHE_URL else {"BACKEND": "django_prometheus.cache.backends.locmem.LocMemCache"}
}

# Provider access: API keys are read from the environment variable a model's
# configuration names, never stored in the database.
ATELIER_PROVIDER_CONCURRENCY = env_int("ATELIER_PROVIDER_CONCURRENCY", 100, minimum=1)
# A failed call is tried again up to this many times, waiting about base x 2^(attempt-1) between tries
# (engine.providers.client; a provider's Retry-After wins).
ATELIER_PROVIDER_MAX_RETRIES = env_int("ATELIER_PROVIDER_MAX_RETRIES", 5, minimum=0)
ATELIER_PROVIDER_BACKOFF_BASE_MS = env_int("ATELIER_PROVIDER_BACKOFF_BASE_MS", 1000, minimum=0)
ATELIER_PROVIDER_CACHE_DIR = Path(env_str("ATELIER_PROVIDER_CACHE_DIR", str(VAR_DIR / "provider-cache")))
ATELIER_EMBED_CACHE_DIR = Path(env_str("ATELIER_EMBED_CACHE_DIR", str(VAR_DIR / "embed-cache")))
# The site's Ed25519 key that signs every exported bundle's manifest (made on first export, mode 0600);
# its public half is published at /bundles/signing-key.pem (leaderboard.bundles.signing). Keep it with the
# database's backups: a new key cannot vouch for bundles the old one signed.
ATELIER_BUNDLE_SIGNING_KEY = Path(env_str("ATELIER_BUNDLE_SIGNING_KEY", str(VAR_DIR / "bundle-signing-key.pem")))
# The largest request body (any upload: admin import pages, API imports), counted from Content-Length
# and again while files stream in (evalsite/upload_limits.py). Larger files: the manage.py import commands.
ATELIER_MAX_UPLOAD_BYTES = env_int("ATELIER_MAX_UPLOAD_BYTES", 20 * 2**20, minimum=1024)
FILE_UPLOAD_HANDLERS = [
    "evalsite.upload_limits.CappedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "evalsite.storage.SpooledUploadHandler",  # a disk that fills mid-upload keeps no partial file
]
# Images as annotators receive them (pixels only, flattened), encoded once (annotation.media.served_image).
ATELIER_MEDIA_CACHE_DIR = Path(env_str("ATELIER_MEDIA_CACHE_DIR", str(VAR_DIR / "media-cache")))
# Crowd campaigns: entries through a study's link per client address per minute (the rest get HTTP 429).
ATELIER_PANEL_ENTRIES_PER_MINUTE = env_int("ATELIER_PANEL_ENTRIES_PER_MINUTE", 30, minimum=1)
#: The cookie holding the key of the browser a crowd participant entered in (annotation.participants.participant_enter),
#: named here beside the session's and CSRF's: a framed study's page sets all three (evalsite.middleware.FramedStudyCookies).
ATELIER_PANEL_KEY_COOKIE_NAME = "atelier_panel_key"
ATELIER_ASSIGNMENT_TTL_SECONDS = env_int("ATELIER_ASSIGNMENT_TTL_SECONDS", 30 * 60, minimum=1)
# How often Celery beat sends the runs started while the broker was away (leaderboard.runs.queue).
ATELIER_QUEUE_SWEEP_SECONDS = env_int("ATELIER_QUEUE_SWEEP_SECONDS", 30, minimum=1)
# How often Celery beat returns overdue assignments to the pool (annotation.expire_assignments).
ATELIER_ASSIGNMENT_SWEEP_SECONDS = env_int("ATELIER_ASSIGNMENT_SWEEP_SECONDS", 60, minimum=1)
# How often Celery beat checks the catalogue's names for models written around the services (a shell,
# fixtures) and checks again the items checked against older names (annotation.recheck_blinding).
ATELIER_BLINDING_SWEEP_SECONDS = env_int("ATELIER_BLINDING_SWEEP_SECONDS", 300, minimum=1)

# /metrics answers a request from this machine, or one carrying "Authorization: Bearer <this token>"
# (evalsite/metrics.py); anyone else gets a 404.
ATELIER_METRICS_TOKEN = env_str("ATELIER_METRICS_TOKEN")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_log_level("LOG_LEVEL", "WARNING")},
}

WHITENOISE_USE_FINDERS = DEBUG or ATELIER_DEV  # the demo (ATELIER_DEV, no DEBUG) serves static files from the finders
WHITENOISE_AUTOREFRESH = DEBUG
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file, not memory, so that a Celery worker process started by the
    # end-to-end tests sees the same test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}
