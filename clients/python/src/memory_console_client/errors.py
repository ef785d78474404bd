"""Errors of the Memory Console API as exceptions: one class per status, each carrying the
API's {"error": {"code", "message", "details"}}."""

from typing import Any


class MemoryConsoleError(Exception):
    """An answer of the API outside 2xx, or no answer at all (status None)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "",
        details: Any = None,
        method: str = "",
        url: str = "",
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details = details if details is not None else {}
        self.method = method
        self.url = url
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f" ({self.method} {self.url})" if self.method else ""
        status = f"{self.status} {self.code}: " if self.status else ""
        return f"{status}{self.message}{where}"


class BadRequest(MemoryConsoleError):
    """400: a field or parameter to fix; the message names it, details holds each field's."""


class AuthenticationFailed(MemoryConsoleError):
    """401: the API key is missing, malformed, unknown or revoked."""


class PermissionDenied(MemoryConsoleError):
    """403: the operation needs a project-admin key."""


class NotFound(MemoryConsoleError):
    """404: no such object for this key (another agent's objects are not found either)."""


class Conflict(MemoryConsoleError):
    """409: a stale version (details["current_version"]), a duplicate, or a finished state."""


class PayloadTooLarge(MemoryConsoleError):
    """413: the body is over its limit."""


class Unprocessable(MemoryConsoleError):
    """422: well-formed, but naming nothing usable (e.g. evidence not in its message)."""


class RateLimited(MemoryConsoleError):
    """429 after the retries: retry_after says when the key may call again."""


class ServerError(MemoryConsoleError):
    """5xx after the retries."""


class TransportError(MemoryConsoleError):
    """No answer: the connection failed or timed out after the retries."""


BY_STATUS: dict[int, type[MemoryConsoleError]] = {
    400: BadRequest,
    401: AuthenticationFailed,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: Unprocessable,
    429: RateLimited,
}


def error_class(status: int) -> type[MemoryConsoleError]:
    if status >= 500:
        return ServerError
    return BY_STATUS.get(status, MemoryConsoleError)
