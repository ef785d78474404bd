"""HTTP for the client: the bearer key, JSON, retries with backoff, errors as exceptions."""

import email.utils
import random
import time
from collections.abc import Iterator
from typing import Any

import httpx2

from memory_console_client.errors import MemoryConsoleError, TransportError, error_class
from memory_console_client.operations import Operation

# Statuses worth another attempt. 429 and 503 mean the request was not carried out (the rate
# limit, or a database too busy to take the write: the API says nothing was changed), so any
# method is retried; after 500, 502 or 504 only a request that is safe to repeat is.
ALWAYS_RETRIED = {429, 503}
RETRIED_WHEN_SAFE = {500, 502, 504}
SAFE_METHODS = {"GET", "HEAD", "PUT", "DELETE"}


class Transport:
    """Send the client's operations; retry, then raise MemoryConsoleError subclasses."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_wait: float = 30.0,
        http: httpx2.Client | None = None,
    ):
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait  # the longest Retry-After worth waiting for; longer raises
        self.http = http or httpx2.Client(timeout=timeout)
        self.http.base_url = base_url.rstrip("/")
        self.http.headers["Authorization"] = f"Bearer {api_key}"
        self.http.headers["User-Agent"] = "memory-console-client/0.1"

    def close(self) -> None:
        self.http.close()

    def call(
        self,
        op: Operation,
        *,
        path: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        retry_safe: bool = False,
    ) -> Any:
        """Send one operation and return its JSON answer (None for 204).

        retry_safe: the request may be repeated after a 5xx or a lost connection (an append
        whose every message carries an idempotency key, say).
        """
        undeclared = set(body or ()) - set(op.fields) | set(params or ()) - set(op.params)
        if undeclared:  # the schema test checks only what operations.py declares
            raise ValueError(f"{op.id} does not declare {sorted(undeclared)}")
        query = {k: v for k, v in (params or {}).items() if v is not None}
        return self.send(
            op.method,
            op.url(**(path or {})),
            body=body,
            params=query,
            retry_safe=retry_safe or op.method in SAFE_METHODS,
        )

    def send(self, method: str, url: str, *, body=None, params=None, retry_safe=False) -> Any:
        attempt = 0
        while True:
            try:
                response = self.http.request(method, url, json=body, params=params)
            except httpx2.TransportError as exc:
                if retry_safe and attempt < self.max_retries:
                    self._sleep(self._backoff(attempt))
                    attempt += 1
                    continue
                raise TransportError(
                    str(exc) or type(exc).__name__, method=method, url=url
                ) from exc
            if response.is_success:
                return response.json() if response.content else None
            retried = response.status_code in ALWAYS_RETRIED or (
                retry_safe and response.status_code in RETRIED_WHEN_SAFE
            )
            wait = _retry_after(response)
            if retried and attempt < self.max_retries and (wait or 0) <= self.max_wait:
                self._sleep(wait if wait is not None else self._backoff(attempt))
                attempt += 1
                continue
            raise _error(response, method, url, wait)

    def pages(self, op: Operation, *, path=None, params=None) -> Iterator[dict]:
        """Yield each result of a cursor-paginated list, following the pages' next links."""
        page = self.call(op, path=path, params=params)
        while True:
            yield from page["results"]
            if not page.get("next"):
                return
            page = self.send("GET", page["next"], retry_safe=True)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter: up to backoff · 2^attempt seconds."""
        return random.uniform(0, self.backoff * 2**attempt)

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def _retry_after(response: httpx2.Response) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), or None."""
    raw = response.headers.get("Retry-After")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error(response: httpx2.Response, method: str, url: str, wait) -> MemoryConsoleError:
    try:
        error = response.json()["error"]
        code, message, details = error["code"], error["message"], error.get("details")
    except (ValueError, KeyError, TypeError):
        code, message, details = "", response.text[:500] or response.reason_phrase, None
    return error_class(response.status_code)(
        message,
        status=response.status_code,
        code=code,
        details=details,
        method=method,
        url=str(response.request.url) if response.request else url,
        retry_after=wait,
    )
