"""Settings for Memory Console. Everything deploy-specific comes from the environment (README)."""

import secrets
import tomllib
from pathlib import Path

from apps.memconfig.schema import defaults_from_env
from memory_console.database import database_from_url
from memory_console.env import env_bool, env_float, env_int, env_list, env_rate, env_str
from memory_console.schedule import BEAT_SCHEDULE

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("DATA_DIR", str(BASE_DIR / "data"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)
# The release, as pyproject.toml names it; MCP clients are told it (serverInfo.version).
APP_VERSION = tomllib.loads((BASE_DIR / "pyproject.toml").read_text())["project"]["version"]


def _secret_key() -> str:
    """Use SECRET_KEY, else one generated once and kept in the data directory."""
    key = env_str("SECRET_KEY")
    if key:
        return key
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "apps.console.admin_site.ConsoleAdminConfig",  # django.contrib.admin, for staff only
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.postgres",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "csp",
    "axes",
    "apps.core",
    "apps.tenancy",
    "apps.threads",
    "apps.runstate",
    "apps.memconfig",
    "apps.jobs",
    "apps.providers",
    "apps.knowledge",
    "apps.episodic",
    "apps.notes",
    "apps.actions",
    "apps.observations",
    "apps.profiles",
    "apps.context",
    "apps.search",
    "apps.audit",
    "apps.evaluation",
    "apps.console",
    "apps.api",
    "apps.lifecycle",
]

AUTHENTICATION_BACKENDS = [
    # First, so that a locked-out username and address is refused before any password check.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

MIDDLEWARE = [
    # First: the forwarded headers of a request that no trusted proxy sent are dropped before
    # anything reads them (the HTTPS redirect, login throttling, the request log).
    "apps.core.client_ip.TrustedProxyMiddleware",
    # Outermost, so that the request log line and the metrics see every answer, refusals included.
    "apps.core.observability.RequestObservabilityMiddleware",
    # Outside every refusal below, so that none of the API's answers is cached either.
    "apps.core.middleware.ApiNoStoreMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "apps.core.middleware.RequireContentLengthMiddleware",
    "apps.core.middleware.QueryStringCheckMiddleware",
    "apps.core.middleware.PathParameterCheckMiddleware",
    "apps.core.middleware.ApiBodyLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "apps.console.htmx.HtmxConsoleMiddleware",
    # Last, as django-axes asks: it turns a lockout into its answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memory_console.urls"
LOGIN_URL = "console:login"
LOGIN_REDIRECT_URL = "console:dashboard"
WSGI_APPLICATION = "memory_console.wsgi.application"

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
                "apps.console.roles.roles_context",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(
        env_str("DATABASE_URL"),
        data_dir=DATA_DIR,
        busy_timeout=env_int("SQLITE_BUSY_TIMEOUT", 30),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# The Docker image collects static files into itself (STATIC_ROOT=/app/static-collected), out of
# the data volume, so that a new image's files are never hidden by an old volume's.
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(DATA_DIR / "static")))
# whitenoise warns at every start about a missing one
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed, compressed names once collectstatic has run; the plain names before it.
    "staticfiles": {"BACKEND": "apps.core.staticfiles.ManifestOrSourceStaticFilesStorage"},
}
# Until collectstatic has run, whitenoise serves the files from where they live in the source.
WHITENOISE_USE_FINDERS = not (STATIC_ROOT / "staticfiles.json").exists()
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(DATA_DIR / "media")))

SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_TLS_PROXY", False) else None
)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# /healthz answers the container's health check, /metrics the scraper, over plain HTTP inside
# the stack's network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"

# Content security policy (django-csp): the console's scripts are htmx and static/js/console.js,
# both files served from here; no inline script, no inline style, no eval. htmx is told in
# base.html not to insert its indicator <style>, which this policy would refuse.
_SELF = "'self'"
CONTENT_SECURITY_POLICY = {
    # The API documentation page (Swagger UI) runs an inline script of its own.
    "EXCLUDE_URL_PREFIXES": ["/api/docs/"],
    "DIRECTIVES": {
        "default-src": [_SELF],
        "script-src": [_SELF],
        "style-src": [_SELF],
        "img-src": [_SELF, "data:"],
        "connect-src": [_SELF],
        "font-src": [_SELF],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": [_SELF],
        "frame-ancestors": ["'none'"],
    },
}

# Login throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one username
# from one address, that pair is refused for LOGIN_LOCKOUT_MINUTES.
AXES_ENABLED = env_bool("LOGIN_THROTTLING", True)
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = env_int("LOGIN_LOCKOUT_MINUTES", 15) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# Every failed login is kept (in the admin, with address and user agent), not only the counts.
AXES_ENABLE_ACCESS_FAILURE_LOG = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_CLIENT_IP_CALLABLE = "apps.core.client_ip.client_ip"
BEHIND_TLS_PROXY = env_bool("BEHIND_TLS_PROXY", False)
# The TLS proxy's addresses (addresses or CIDRs, comma-separated): X-Forwarded-For and
# X-Forwarded-Proto are believed only from them, and only with BEHIND_TLS_PROXY on; from any
# other sender they are dropped (apps/core/client_ip.py), so a caller that reaches the port
# directly can neither choose its address for login throttling nor skip the HTTPS redirect.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES")

# /metrics in Prometheus' text format, for a scraper that sends "Authorization: Bearer <token>";
# unset, the endpoint does not exist (404).
METRICS_TOKEN = env_str("METRICS_TOKEN")
# A Celery worker serves its own metrics (jobs, ingestion, LLM calls) on this port; 0: it does not.
WORKER_METRICS_PORT = env_int("WORKER_METRICS_PORT", 0)

# One JSON object per line: every request's method, route, status, duration and API key prefix.
LOG_FORMAT = env_str("LOG_FORMAT", "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "apps.core.logging.JsonFormatter"},
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "plain",
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # The request log replaces Django's own line for each 4xx and 5xx answer.
        "django.request": {"level": "ERROR"},
        "django.server": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
    },
}

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.tenancy.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.tenancy.auth.IsAgent"],
    "DEFAULT_RENDERER_CLASSES": ["apps.api.renderers.OrjsonRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "apps.api.renderers.NamedFormatNegotiation",
    "DEFAULT_PARSER_CLASSES": ["apps.api.v1.parsers.DepthSafeJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "apps.api.schema.ApiAutoSchema",
    "EXCEPTION_HANDLER": "apps.core.errors.api_exception_handler",
    "UNAUTHENTICATED_USER": None,
    # Per API key, over all of its requests (apps/core/throttling.py); 429 with Retry-After.
    "DEFAULT_THROTTLE_CLASSES": ["apps.core.throttling.ApiKeyRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"api_key": env_rate("API_RATE_LIMIT", "600/min")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Memory Console API",
    "DESCRIPTION": "Memory for AI agents: threads, messages, runs, plans, checkpoints and config.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    # The API's ids in paths (apps/core/converters.py): UUIDs, in either case; end users' ids.
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "string", "format": "uuid"}, "end_user": str},
    "ENUM_NAME_OVERRIDES": {
        "DocumentStatusEnum": "apps.knowledge.models.DocumentStatus",
        "EntryStatusEnum": "apps.episodic.models.EntryStatus",
        "RunStatusEnum": "apps.threads.models.RunStatus",
    },
}

API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 8 * 1024 * 1024)
MESSAGE_MAX_CONTENT_CHARS = env_int("MESSAGE_MAX_CONTENT_CHARS", 200_000)
MESSAGE_BATCH_MAX = env_int("MESSAGE_BATCH_MAX", 1000)
API_PAGE_SIZE = env_int("API_PAGE_SIZE", 50)
API_MAX_PAGE_SIZE = env_int("API_MAX_PAGE_SIZE", 500)
# An API key's last-used time is written at most this often, to keep writes off the hot path.
API_KEY_TOUCH_SECONDS = env_int("API_KEY_TOUCH_SECONDS", 60)
# What every API request reads (its key with the agent and project, the agent's memory config,
# the project's serving embedder) is kept in each process for HOT_CACHE_SECONDS. The process
# that changes one of them forgets it at once; other processes within that many seconds.
HOT_CACHE_SECONDS = env_int("HOT_CACHE_SECONDS", 5)
# The default cache holds the API rate limit's counts: with CACHE_URL (redis://…) every process
# shares them; without it each process counts alone.
CACHE_URL = env_str("CACHE_URL")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    ),
    "hot": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "hot",
        "TIMEOUT": HOT_CACHE_SECONDS,
        "OPTIONS": {"MAX_ENTRIES": 10_000},
    },
}

# --- Memory defaults (the global level of the memory config) --------------------------------
MEMORY_DEFAULTS = defaults_from_env()

# --- Model providers (any OpenAI-compatible endpoint) ---------------------------------------
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_TIMEOUT = env_float("OPENAI_TIMEOUT", 30.0)
OPENAI_MAX_RETRIES = env_int("OPENAI_MAX_RETRIES", 3)
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 128)

# --- Artifacts of runs ----------------------------------------------------------------------
# Kept in the database, so keep them small; API_MAX_BODY_BYTES also caps an upload's body.
ARTIFACT_MAX_BYTES = env_int("ARTIFACT_MAX_BYTES", 5 * 1024 * 1024)

# --- Knowledge bases ------------------------------------------------------------------------
KNOWLEDGE_MAX_UPLOAD_BYTES = env_int("KNOWLEDGE_MAX_UPLOAD_BYTES", 50 * 1024 * 1024)
KNOWLEDGE_CHUNK_TOKENS = env_int("KNOWLEDGE_CHUNK_TOKENS", 400)
KNOWLEDGE_CHUNK_OVERLAP_TOKENS = env_int("KNOWLEDGE_CHUNK_OVERLAP_TOKENS", 60)
KNOWLEDGE_EXTRACT_TIMEOUT = env_int("KNOWLEDGE_EXTRACT_TIMEOUT", 300)  # seconds per PDF
KNOWLEDGE_EXTRACT_MEMORY_MB = env_int("KNOWLEDGE_EXTRACT_MEMORY_MB", 1024)  # per PDF reader
# Web pages added by address: the whole fetch (redirects included) must fit in the timeout,
# and a page over the size cap fails rather than being cut.
KNOWLEDGE_URL_TIMEOUT = env_float("KNOWLEDGE_URL_TIMEOUT", 20.0)  # seconds
KNOWLEDGE_URL_MAX_BYTES = env_int("KNOWLEDGE_URL_MAX_BYTES", 10 * 1024 * 1024)
# Outbound requests to user-given addresses (apps/core/outbound.py) refuse loopback, private
# and link-local addresses; list networks here (CIDR, comma-separated) to allow them anyway,
# e.g. an intranet wiki at 10.20.0.0/16.
OUTBOUND_ALLOWED_NETWORKS = env_list("OUTBOUND_ALLOWED_NETWORKS")
# Uploads larger than this go to a temporary file instead of memory, so memory stays flat.
FILE_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
FILE_UPLOAD_HANDLERS = [
    "apps.core.uploads.SizeLimitUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# --- Search ------------------------------------------------------------------------------
SEARCH_CANDIDATES = env_int("SEARCH_CANDIDATES", 50)  # per signal, before fusion
# Full-text: each query term brings at most its newest this-many matches in the scope.
SEARCH_LEXICAL_CANDIDATES = env_int("SEARCH_LEXICAL_CANDIDATES", 200)
# PostgreSQL: how a term's matches are found (apps/search/backends/postgres.py).
SEARCH_LEXICAL_SAMPLE = env_int("SEARCH_LEXICAL_SAMPLE", 400)
SEARCH_LEXICAL_WALK = env_int("SEARCH_LEXICAL_WALK", 15000)
SEARCH_LEXICAL_SCAN = env_int("SEARCH_LEXICAL_SCAN", 2000)
SEARCH_EXACT_SCAN_ROWS = env_int("SEARCH_EXACT_SCAN_ROWS", 20000)  # exact vector scan up to this
# Measured on the labelled set (bench/retrieval.py): with a semantic embedder, a lighter
# full-text weight and a small RRF k let fusion beat the better single signal.
SEARCH_WEIGHT_LEXICAL = env_float("SEARCH_WEIGHT_LEXICAL", 0.5)
SEARCH_WEIGHT_VECTOR = env_float("SEARCH_WEIGHT_VECTOR", 1.0)
SEARCH_WEIGHT_RECENCY = env_float("SEARCH_WEIGHT_RECENCY", 0.05)
SEARCH_RECENCY_HALF_LIFE_DAYS = env_float("SEARCH_RECENCY_HALF_LIFE_DAYS", 30.0)
SEARCH_RRF_K = env_int("SEARCH_RRF_K", 5)
# Messages after each of a message search's best three matches read as part of their session: the
# answer often comes a few turns after the turn that names the topic (conversation.py).
SEARCH_SESSION_FOLLOW = env_int("SEARCH_SESSION_FOLLOW", 12)
# Added to a message created inside the period a query names ("last week", "in May 2023").
SEARCH_WEIGHT_TEMPORAL = env_float("SEARCH_WEIGHT_TEMPORAL", 0.08)
# The item kinds (message, chunk, entry, note, artifact) fused by per-query normalised scores
# rather than by rank, and the weights of each signal there (apps/search/normalized.py).
SEARCH_NORMALIZED_KINDS = env_list("SEARCH_NORMALIZED_KINDS", "message")
SEARCH_NORMALIZED_WEIGHT_LEXICAL = env_float("SEARCH_NORMALIZED_WEIGHT_LEXICAL", 1.0)
# Vectors count twice full-text: cross-validation on the multi-session labelled set chose 1:2
# with the local embedder (bench/RESULTS.md); full-text alone is not affected.
SEARCH_NORMALIZED_WEIGHT_VECTOR = env_float("SEARCH_NORMALIZED_WEIGHT_VECTOR", 2.0)

# --- Retrieval evaluation (the labelled set the console's evaluation page runs) -------------
EVALUATION_SET_PATH = Path(
    env_str("EVALUATION_SET_PATH", str(BASE_DIR / "bench" / "data" / "retrieval_set.json"))
)

# --- Background jobs -----------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BEAT_SCHEDULE = BEAT_SCHEDULE
# A job running longer than this without finishing is taken to be orphaned and is reclaimed.
JOB_LEASE_SECONDS = env_int("JOB_LEASE_SECONDS", 600)
