"""Call a model endpoint, retrying transient failures with exponential backoff.

The openai client is built with max_retries=0 and every call goes through call_with_retry, so one
policy covers embeddings and chat: connection errors, timeouts, 408, 429 and 5xx are retried after
base_delay × 2^attempt seconds; any other error is raised at once.
"""

import time
from collections.abc import Callable
from typing import TypeVar

import openai

RETRY_BASE_DELAY = 0.2
_RETRIED_STATUSES = {408, 429}

T = TypeVar("T")


def is_transient(error: Exception) -> bool:
    """Return whether another attempt may succeed where this one failed."""
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code in _RETRIED_STATUSES or error.status_code >= 500
    return False


def call_with_retry(
    call: Callable[[], T],
    *,
    max_retries: int,
    base_delay: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Return call(), retried up to max_retries times on transient openai errors."""
    # Read the constant at call time, so a test or a caller can lower it for everyone.
    delay = RETRY_BASE_DELAY if base_delay is None else base_delay
    attempt = 0
    while True:
        try:
            return call()
        except openai.APIError as error:
            if attempt >= max_retries or not is_transient(error):
                raise
            sleep(delay * 2**attempt)
            attempt += 1


def server_message(error: openai.APIError) -> str:
    """Return the message the server gave for a failed request, without the client's framing."""
    body = error.body
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return error.message


def describe_api_error(error: openai.APIError, *, model: str, base_url: str, timeout: float) -> str:
    """Return a sentence that says what failed and what to change."""
    if isinstance(error, openai.APITimeoutError):
        return f"model {model} at {base_url} timed out after {timeout}s; raise OPENAI_TIMEOUT"
    if isinstance(error, openai.APIConnectionError):
        return f"cannot reach {base_url} for model {model}; check OPENAI_BASE_URL and the network"
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        hint = {
            401: "; check OPENAI_API_KEY",
            403: "; check the key's permissions for this model",
            404: "; check the model name and OPENAI_BASE_URL",
            429: "; slow down or raise the provider's rate limit",
        }.get(status, "; the provider failed, try again later" if status >= 500 else "")
        return f"model {model} at {base_url} answered {status}: {server_message(error)}{hint}"
    return f"model {model} at {base_url} failed: {server_message(error)}"
