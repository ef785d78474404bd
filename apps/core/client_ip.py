"""Who a request came from, believing forwarded headers only from the configured proxies.

X-Forwarded-For and X-Forwarded-Proto are whatever the sender chose to write unless the sender
is the TLS proxy, which overwrites or appends them. So they are believed only from an address
in TRUSTED_PROXIES (with BEHIND_TLS_PROXY on); from anyone else they are removed before any
other code reads them (the HTTPS redirect, login throttling, logs).
"""

import functools
import ipaddress

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

FORWARDED_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO")


@functools.lru_cache(maxsize=8)
def proxy_networks(values: tuple[str, ...]) -> tuple:
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"TRUSTED_PROXIES: {value!r} is not an address or a network (CIDR)."
            ) from None
    return tuple(networks)


def trusted_proxy(address: str) -> bool:
    """Say whether address is one of the TLS proxies that forwarded headers are believed from."""
    if not settings.BEHIND_TLS_PROXY:
        return False
    try:
        parsed = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped:
        parsed = parsed.ipv4_mapped
    return any(parsed in network for network in proxy_networks(tuple(settings.TRUSTED_PROXIES)))


def client_ip(request) -> str:
    """Return the caller's address: behind the trusted proxies, the first one they did not add.

    Each proxy appends the address it saw to X-Forwarded-For, so read from the right, the
    entries are trustworthy until the first one that is not a trusted proxy: that one is the
    caller. Entries left of it are whatever the caller chose to send.
    """
    address = request.META.get("REMOTE_ADDR", "")
    if not trusted_proxy(address):
        return address
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    for hop in reversed(hops):
        address = hop
        if not trusted_proxy(hop):
            break
    return address


class TrustedProxyMiddleware:
    """Drop X-Forwarded-For and X-Forwarded-Proto unless a trusted proxy sent the request.

    Django's SECURE_PROXY_SSL_HEADER believes X-Forwarded-Proto from any sender, so a caller
    reaching the port directly could skip the HTTPS redirect; removing the headers here,
    first of all middleware, makes every later reader see only what a proxy vouched for.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not trusted_proxy(request.META.get("REMOTE_ADDR", "")):
            for header in FORWARDED_HEADERS:
                request.META.pop(header, None)
        return self.get_response(request)
