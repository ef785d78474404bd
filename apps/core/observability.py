"""One structured log line and the metrics of every HTTP request."""

import logging
import time

from apps.core.metrics import request_record

logger = logging.getLogger("memory_console.requests")


def _route(request) -> str:
    """Return the URL pattern that answered ("api/v1/threads/<id:thread_id>"), not the path.

    Patterns keep the metrics' label values few; a path matching no pattern is "unmatched".
    """
    match = getattr(request, "resolver_match", None)
    return match.route if match is not None else "unmatched"


class RequestObservabilityMiddleware:
    """Log each request as one line (method, route, path, status, duration, API key prefix) and
    count it in /metrics."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        seconds = time.perf_counter() - started
        route = _route(request)
        request_record(
            route=route, method=request.method, status=response.status_code, seconds=seconds
        )
        # DRF puts the authenticated API key on the underlying request as .auth.
        key = getattr(request, "auth", None)
        logger.info(
            "%s %s %s",
            request.method,
            request.path,
            response.status_code,
            extra={
                "method": request.method,
                "route": route,
                "path": request.path,
                "status": response.status_code,
                "duration_ms": round(seconds * 1000, 2),
                "key_prefix": getattr(key, "prefix", None),
            },
        )
        return response
