"""A Python client for the Memory Console API."""

from memory_console_client.client import MemoryConsole
from memory_console_client.errors import (
    AuthenticationFailed,
    BadRequest,
    Conflict,
    MemoryConsoleError,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    TransportError,
    Unprocessable,
)

__all__ = [
    "AuthenticationFailed",
    "BadRequest",
    "Conflict",
    "MemoryConsole",
    "MemoryConsoleError",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "RateLimited",
    "ServerError",
    "TransportError",
    "Unprocessable",
]
