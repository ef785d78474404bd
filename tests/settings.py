"""Settings for the test suite: the real ones, with static files served from the finders and
uploads kept in a folder of their own."""

import os
from pathlib import Path

from memory_console.settings import *  # noqa: F403

STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STATIC_ROOT = None  # static files come from the finders; nothing is collected
MEDIA_ROOT = DATA_DIR / "test-media"  # noqa: F405

# A SQLite test database of this run's own, so that two runs in one checkout never share a file.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    _test = DATABASES["default"]["TEST"]  # noqa: F405
    _name = Path(_test["NAME"])
    _test["NAME"] = str(_name.with_name(f"{_name.stem}_{os.getpid()}{_name.suffix}"))

# Requests are not rate-limited, except in the tests of the limit (tests/production), which set
# their own rate; logins are throttled as in production, each test starting with no failures.
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {"api_key": None},
}
METRICS_TOKEN = ""
