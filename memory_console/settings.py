"""Settings for Memory Console. Everything deploy-specific comes from the environment (README)."""

import secrets
from pathlib import Path

from apps.memconfig.schema import defaults_from_env
from memory_console.database import database_from_url
from memory_console.env import env_bool, env_float, env_int, env_list, env_str
from memory_console.schedule import BEAT_SCHEDULE

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("DATA_DIR", str(BASE_DIR / "data"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


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
    "apps.console.admin_site.ConsoleAdminConfig",  # django.contrib.admin, open to the admin role
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
    "apps.core",
    "apps.tenancy",
    "apps.threads",
    "apps.runstate",
    "apps.memconfig",
    "apps.jobs",
    "apps.providers",
    "apps.knowledge",
    "apps.episodic",
    "apps.observations",
    "apps.profiles",
    "apps.context",
    "apps.search",
    "apps.audit",
    "apps.evaluation",
    "apps.console",
    "apps.api",
]

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "apps.console.admin_site.AdminRoleBackend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "apps.core.middleware.RequireContentLengthMiddleware",
    "apps.core.middleware.QueryStringCheckMiddleware",
    "apps.core.middleware.ApiBodyLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "apps.console.htmx.HtmxConsoleMiddleware",
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
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns at every start about a missing one
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
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.tenancy.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.tenancy.auth.IsAgent"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["apps.api.v1.parsers.DepthSafeJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "apps.core.errors.api_exception_handler",
    "UNAUTHENTICATED_USER": None,
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
    "ENUM_NAME_OVERRIDES": {
        "DocumentStatusEnum": "apps.knowledge.models.DocumentStatus",
        "EntryStatusEnum": "apps.episodic.models.EntryStatus",
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
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
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

# --- Knowledge bases ------------------------------------------------------------------------
KNOWLEDGE_MAX_UPLOAD_BYTES = env_int("KNOWLEDGE_MAX_UPLOAD_BYTES", 50 * 1024 * 1024)
KNOWLEDGE_CHUNK_TOKENS = env_int("KNOWLEDGE_CHUNK_TOKENS", 400)
KNOWLEDGE_CHUNK_OVERLAP_TOKENS = env_int("KNOWLEDGE_CHUNK_OVERLAP_TOKENS", 60)
KNOWLEDGE_EXTRACT_TIMEOUT = env_int("KNOWLEDGE_EXTRACT_TIMEOUT", 300)  # seconds per PDF
KNOWLEDGE_EXTRACT_MEMORY_MB = env_int("KNOWLEDGE_EXTRACT_MEMORY_MB", 1024)  # per PDF reader
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
# PostgreSQL: how a term's matches are found (apps/search/lexical_postgres.py).
SEARCH_LEXICAL_SAMPLE = env_int("SEARCH_LEXICAL_SAMPLE", 400)
SEARCH_LEXICAL_WALK = env_int("SEARCH_LEXICAL_WALK", 15000)
SEARCH_EXACT_SCAN_ROWS = env_int("SEARCH_EXACT_SCAN_ROWS", 20000)  # exact vector scan up to this
# Measured on the labelled set (bench/retrieval.py): with a semantic embedder, a lighter
# full-text weight and a small RRF k let fusion beat the better single signal.
SEARCH_WEIGHT_LEXICAL = env_float("SEARCH_WEIGHT_LEXICAL", 0.5)
SEARCH_WEIGHT_VECTOR = env_float("SEARCH_WEIGHT_VECTOR", 1.0)
SEARCH_WEIGHT_RECENCY = env_float("SEARCH_WEIGHT_RECENCY", 0.05)
SEARCH_RECENCY_HALF_LIFE_DAYS = env_float("SEARCH_RECENCY_HALF_LIFE_DAYS", 30.0)
SEARCH_RRF_K = env_int("SEARCH_RRF_K", 5)

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
