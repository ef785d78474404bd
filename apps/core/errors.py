"""The application's error type and the one JSON error shape the API answers with.

Every error leaves the API as {"error": {"code", "message", "details"}} with a 4xx status.
"""

import logging
import re
import sys

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from apps.core.database_errors import BUSY_RETRY_AFTER_SECONDS, database_busy

logger = logging.getLogger(__name__)


class ApplicationError(Exception):
    """A failure a client can fix; services raise it, the API renders it."""

    status_code = status.HTTP_400_BAD_REQUEST
    code = "invalid"

    def __init__(self, message: str, *, details: dict | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code:
            self.code = code


class NotFound(ApplicationError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"


class Conflict(ApplicationError):
    status_code = status.HTTP_409_CONFLICT
    code = "conflict"


class UnsupportedMediaType(ApplicationError):
    status_code = status.HTTP_415_UNSUPPORTED_MEDIA_TYPE
    code = "unsupported_media_type"


class PayloadTooLarge(ApplicationError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    code = "payload_too_large"


class Unprocessable(ApplicationError):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    code = "unprocessable"


def error_body(code: str, message: str, details: dict | list | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _validation_message(detail) -> str:
    """Name the first invalid field and what is wrong with it, e.g. 'messages[2].role: ...'."""
    path: list[str] = []
    node = detail
    while True:
        if isinstance(node, dict) and node:
            key, node = next(iter(node.items()))
            if key != "non_field_errors":
                path.append(f"[{key}]" if str(key).isdigit() else str(key))
        elif isinstance(node, list) and node:
            index = next((i for i, item in enumerate(node) if item), 0)
            if isinstance(node[index], (dict, list)):
                path.append(f"[{index}]")
            node = node[index]
        else:
            break
    where = ".".join(path).replace(".[", "[")
    return f"{where}: {node}" if where else str(node)


BUSY_MESSAGE = (
    "The database is busy with another write and did not free up in time; nothing was "
    "changed. Send the request again after the Retry-After seconds."
)


# A message that names its field first: "content: 25000 characters; the limit is 20000."
_NAMED_FIELD = re.compile(
    r"([a-z_][a-z0-9_]*(?:\[\d+\])?(?:\.[a-z_][a-z0-9_]*(?:\[\d+\])?)*): (.+)", re.S
)


def _field_of(message: str) -> dict:
    """details for an error raised with none: its field and what is wrong, when the message
    names the field first, as a serializer's field errors are given ({"content": ["..."]})."""
    match = _NAMED_FIELD.fullmatch(message)
    return {match.group(1): [match.group(2)]} if match else {}


def api_exception_handler(exc, context):
    """Render every API error in the one shape; unknown exceptions stay 500s for the logs."""
    if isinstance(exc, ApplicationError):
        details = exc.details or _field_of(exc.message)
        return Response(error_body(exc.code, exc.message, details), status=exc.status_code)
    if database_busy(exc):
        logger.warning("answered 503: %s", exc)
        return Response(
            error_body("database_busy", BUSY_MESSAGE),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(BUSY_RETRY_AFTER_SECONDS)},
        )
    if isinstance(exc, RequestDataTooBig):
        exc = exceptions.APIException("Request body too large.")
        exc.status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, exceptions.UnsupportedMediaType):
        exc = _what_to_send(exc, context)
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        code, message, details = "invalid", _validation_message(exc.detail), exc.detail
    elif isinstance(exc, exceptions.ParseError):
        code, message, details = "parse_error", str(exc.detail), {}
    else:
        code = exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code
        message, details = str(exc.detail), {}
    if response.status_code == status.HTTP_413_REQUEST_ENTITY_TOO_LARGE:
        code = "payload_too_large"
    response.data = error_body(code, message, details)
    return response


def _what_to_send(exc, context) -> exceptions.UnsupportedMediaType:
    """DRF's 415 named the type sent ("" when none was) but not the ones the endpoint takes."""
    request = context.get("request")
    taken = [parser.media_type for parser in getattr(request, "parsers", None) or []]
    if not taken:
        return exc
    sent = request.content_type.split(";")[0].strip() if request.content_type else ""
    said = f"Content-Type {sent!r} is not taken here" if sent else "No Content-Type was sent"
    return exceptions.UnsupportedMediaType(
        sent, detail=f"{said}; send the body as {' or '.join(taken)}."
    )


def not_found(request, exception=None):
    """404 page: JSON in the API's error shape under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            error_body("not_found", f"No such URL: {request.path}. See /api/docs/."), status=404
        )
    return defaults.page_not_found(request, exception)


def server_error(request):
    """500 page: JSON in the API's error shape under /api/, Django's page elsewhere.

    A database too busy to take the write in time is no server failure: 503 with Retry-After
    (the console's pages, and anything outside an API view, end up here).
    """
    if database_busy(sys.exc_info()[1]):
        return _busy(request)
    if request.path.startswith("/api/"):
        return JsonResponse(
            error_body("server_error", "The server failed; the error was logged."), status=500
        )
    return defaults.server_error(request)


def _busy(request):
    if request.path.startswith("/api/"):
        response = JsonResponse(error_body("database_busy", BUSY_MESSAGE), status=503)
    else:
        response = HttpResponse(
            f"<!doctype html><title>Busy</title><h1>Busy, try again</h1><p>{BUSY_MESSAGE}</p>",
            status=503,
        )
    response["Retry-After"] = str(BUSY_RETRY_AFTER_SECONDS)
    return response
