"""Errors the providers raise, apart from the modules that raise them (no import cycles)."""


class EmbeddingError(Exception):
    """Embedding failed; the message says what to fix."""
