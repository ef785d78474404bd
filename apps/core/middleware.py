from django.conf import settings
from django.http import JsonResponse

from apps.core.errors import error_body


class ApiBodyLimitMiddleware:
    """Refuse an API request body over its limit before any of it is read.

    Document uploads may be up to KNOWLEDGE_MAX_UPLOAD_BYTES, other API bodies API_MAX_BODY_BYTES.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            uploading = request.path.endswith("/documents") and request.method == "POST"
            limit = (
                settings.KNOWLEDGE_MAX_UPLOAD_BYTES if uploading else settings.API_MAX_BODY_BYTES
            )
            if length > limit:
                return JsonResponse(
                    error_body(
                        "payload_too_large",
                        f"Request body is {length} bytes; the limit is {limit} bytes."
                        + (" Split the file." if uploading else " Send less per request."),
                        {"limit_bytes": limit},
                    ),
                    status=413,
                )
        return self.get_response(request)
