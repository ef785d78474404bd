"""Errors the providers raise, apart from the modules that raise them (no import cycles)."""


class EmbeddingError(Exception):
    """Embedding failed; the message says what to fix."""


class LLMError(Exception):
    """A chat model call failed; the message says what to fix."""


class LLMOutputError(LLMError):
    """The model answered, but not with the output asked for."""


class LLMRefusal(LLMOutputError):
    """The model declined the task ("I can't help with that"), or its filter did."""


class LLMTruncated(LLMOutputError):
    """The answer was cut at the token limit (finish_reason "length"): it is incomplete."""
