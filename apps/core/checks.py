"""Deployment checks of this project's own settings (`manage.py check --deploy`)."""

from django.conf import settings
from django.core.checks import Warning, register

from apps.core.client_ip import proxy_networks


@register(deploy=True)
def trusted_proxies_check(app_configs, **kwargs):
    """Warn when the proxy is announced but no address of it is given, or one is malformed."""
    if not settings.BEHIND_TLS_PROXY:
        return []
    if not settings.TRUSTED_PROXIES:
        return [
            Warning(
                "BEHIND_TLS_PROXY is on but TRUSTED_PROXIES is empty: X-Forwarded-Proto and "
                "X-Forwarded-For are ignored from every sender.",
                hint="Set TRUSTED_PROXIES to the TLS proxy's addresses or networks (.env.example).",
                id="core.W001",
            )
        ]
    proxy_networks(tuple(settings.TRUSTED_PROXIES))  # ImproperlyConfigured names a malformed entry
    return []
