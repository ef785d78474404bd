from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control

from apps.core.errors import error_body
from apps.core.text import text_problem


def _refusal(request, status: int, code: str, message: str, details: dict) -> HttpResponse:
    """Answer in the API's JSON error shape under /api/, as plain text elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body(code, message, details), status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


class ApiNoStoreMiddleware:
    """Mark every answer of the agents' API (/api/v1/, /mcp) Cache-Control: no-store.

    They carry an agent's memory for a bearer key; no browser, proxy or client-side HTTP cache
    should keep a copy. The schema and docs pages stay cacheable.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith(("/api/v1/", "/mcp")):
            patch_cache_control(response, no_store=True)
        return response


class RequireContentLengthMiddleware:
    """Refuse a request whose body comes without Content-Length (Transfer-Encoding: chunked).

    Django reads exactly CONTENT_LENGTH bytes of a body, so a chunked one reads as empty and a
    POST would store empty fields. Gunicorn de-chunks the body (and marks it with
    wsgi.input_terminated) but Django never looks there, and runserver cannot de-chunk at all;
    refusing is the one answer that is right under both. Gunicorn already refuses a request that
    sends both headers.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "HTTP_TRANSFER_ENCODING" in request.META:
            return _refusal(
                request,
                411,
                "length_required",
                "Transfer-Encoding is not supported: send the request body with a "
                "Content-Length header instead.",
                {"header": "Transfer-Encoding"},
            )
        return self.get_response(request)


def query_string_problem(query_string: str) -> tuple[str, str] | None:
    """Return (parameter, what to fix) for the first parameter the server cannot use, or None.

    Django decodes a query string leniently (invalid UTF-8 becomes U+FFFD, silently changing
    the value), so the raw bytes are decoded here strictly; then, like a body's text, a value
    must be storable: PostgreSQL fails on a NUL in any query it is given.
    """
    # WSGI hands the query string over as bytes decoded as Latin-1.
    raw = query_string.encode("iso-8859-1", errors="replace")
    for pair in raw.split(b"&"):
        if not pair:
            continue
        name_bytes, _, value_bytes = pair.partition(b"=")
        name_bytes, value_bytes = (
            unquote_to_bytes(part.replace(b"+", b" ")) for part in (name_bytes, value_bytes)
        )
        try:
            name = name_bytes.decode("utf-8")
        except UnicodeDecodeError:
            name = name_bytes.decode("utf-8", errors="replace")
            return name, "The query parameter's name is not valid UTF-8; percent-encode its bytes"
        try:
            value = value_bytes.decode("utf-8")
        except UnicodeDecodeError:
            return name, "The query parameter is not valid UTF-8; percent-encode its UTF-8 bytes"
        problem = text_problem(name)
        if problem:
            return name, f"The query parameter's name {problem}"
        problem = text_problem(value)
        if problem:
            return name, f"The query parameter {problem}"
    return None


class QueryStringCheckMiddleware:
    """Refuse a query-string parameter the server cannot use, naming it, before any view runs.

    Views read query parameters without a serializer, so this is where they get the checks a
    request body gets.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        found = query_string_problem(request.META.get("QUERY_STRING", ""))
        if found:
            name, problem = found
            # repr() shows an invisible character as an escape and keeps the message encodable.
            shown = name if name.isprintable() else repr(name)
            message = f"{shown}: {problem}."
            return _refusal(request, 400, "invalid", message, {name: [f"{problem}."]})
        return self.get_response(request)


class PathParameterCheckMiddleware:
    """Refuse a text parameter of the URL path that the database cannot store, naming it.

    A path segment is percent-decoded like a query parameter (resources/a%00b), and PostgreSQL
    fails on the NUL it then holds; checked once the URL is resolved, so that the error can
    name the parameter as the route does.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        for name, value in view_kwargs.items():
            problem = text_problem(value) if isinstance(value, str) else None
            if problem:
                problem = f"The path parameter {problem}"
                return _refusal(
                    request, 400, "invalid", f"{name}: {problem}.", {name: [f"{problem}."]}
                )
        return None


def _framing_refused(request) -> JsonResponse | None:
    """Refuse a body the API cannot read as sent: a Content-Length that is no byte count (the
    development server read "abc" as an empty body and created an empty thread; gunicorn
    refuses it itself), or a Content-Encoding other than identity (a gzip body was parsed as
    JSON and failed with a decoding error naming no header; a br one was taken as plain)."""
    length = request.META.get("CONTENT_LENGTH") or ""
    if length and not (length.isascii() and length.isdigit()):
        return JsonResponse(
            error_body(
                "invalid",
                f"Content-Length: {length!r} is no byte count; send the body's size in bytes.",
                {"Content-Length": ["Must be a whole number of bytes."]},
            ),
            status=400,
        )
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "").strip().lower()
    if encoding and encoding != "identity":
        return JsonResponse(
            error_body(
                "unsupported_media_type",
                f"Content-Encoding: {encoding!r} is not accepted; send the body uncompressed.",
                {"Content-Encoding": ["Only identity (no encoding) is accepted."]},
            ),
            status=415,
        )
    return None


class ApiBodyLimitMiddleware:
    """Refuse an API request body over its limit before any of it is read.

    Document uploads (a file, or JSON {title, text}) may be up to KNOWLEDGE_MAX_UPLOAD_BYTES,
    other API and MCP bodies API_MAX_BODY_BYTES; an artifact's own limit (ARTIFACT_MAX_BYTES)
    is its content's, checked by the service. Below these, the body is read without Django's
    DATA_UPLOAD_MAX_MEMORY_SIZE (apps/api/v1/parsers.py), which stays for the console's forms.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith(("/api/", "/mcp")):
            if (refused := _framing_refused(request)) is not None:
                return refused
            length = int(request.META.get("CONTENT_LENGTH") or 0)
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
