"""The configured OpenAI-compatible endpoint: whether there is one, and how to reach it."""

from django.conf import settings

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, llama.cpp, vLLM) ignore the key but the client insists on one.
PLACEHOLDER_API_KEY = "not-needed"
# Why a job that needs a model uses its offline fallback, or does not run, when none is set.
NO_ENDPOINT_REASON = "no LLM endpoint: set OPENAI_API_KEY or OPENAI_BASE_URL"


def endpoint_configured() -> bool:
    """Return whether settings name an endpoint: OPENAI_API_KEY, OPENAI_BASE_URL, or both."""
    return bool(settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL)


def endpoint_options() -> dict:
    """Return the client options for the configured endpoint, from settings."""
    return {
        "api_key": settings.OPENAI_API_KEY or PLACEHOLDER_API_KEY,
        "base_url": settings.OPENAI_BASE_URL or OPENAI_DEFAULT_BASE_URL,
        "timeout": settings.OPENAI_TIMEOUT,
        "max_retries": settings.OPENAI_MAX_RETRIES,
    }
