"""Per API key request rate (API_RATE_LIMIT), counted by DRF's throttling in the default cache."""

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Count each API key's requests, whatever the agent or address; answer 429 past the rate.

    DRF adds Retry-After to the 429. The counts live in the "default" cache: set CACHE_URL to a
    Redis database so that every web worker shares them (each process counts alone otherwise).
    """

    scope = "api_key"

    def get_rate(self):
        # DRF reads the rates once, at import; read them per request so that a change of
        # settings (a test's own rate) takes effect.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        prefix = getattr(request.auth, "prefix", None)
        if prefix is None:
            return None  # not called with a key: authentication answers first
        return self.cache_format % {"scope": self.scope, "ident": prefix}
