"""Say what a failed call to a model endpoint means, and what to change.

The openai client itself retries connection errors, timeouts, 408, 409, 429 and 5xx, up to
OPENAI_MAX_RETRIES times, honouring Retry-After and adding jitter; the error that reaches these
functions is the last one, once those retries are spent.
"""

import openai


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
