"""Settings for the test suite: the real ones, with static files served from the finders and
uploads kept in a folder of their own."""

from memory_console.settings import *  # noqa: F403

STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STATIC_ROOT = None  # static files come from the finders; nothing is collected
MEDIA_ROOT = DATA_DIR / "test-media"  # noqa: F405
