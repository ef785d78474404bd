"""The address a request came from, for login throttling."""

from django.conf import settings


def client_ip(request) -> str:
    """Return the caller's address: behind the TLS proxy, the one the proxy saw.

    The proxy appends the address it saw to X-Forwarded-For, so the last entry is the one to
    trust; the earlier ones are whatever the caller chose to send.
    """
    if settings.BEHIND_TLS_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-1]
    return request.META.get("REMOTE_ADDR", "")
