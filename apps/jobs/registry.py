"""Job kinds and their handlers. Each app registers its handlers from its AppConfig.ready()."""

from collections.abc import Callable

_HANDLERS: dict[str, Callable] = {}
_FAILURE_HANDLERS: dict[str, Callable] = {}


def job_handler(kind: str):
    """Register the decorated function as the handler of jobs of this kind."""

    def register(function: Callable) -> Callable:
        _HANDLERS[kind] = function
        return function

    return register


def job_failure_handler(kind: str):
    """Register the decorated function(job, error) to run once a job of this kind has failed."""
    # It runs after the last attempt, whether the handler raised or its worker stopped, so the
    # kind can record the failure on its own rows (a document shows why it failed).

    def register(function: Callable) -> Callable:
        _FAILURE_HANDLERS[kind] = function
        return function

    return register


def handler_for(kind: str) -> Callable | None:
    return _HANDLERS.get(kind)


def failure_handler_for(kind: str) -> Callable | None:
    return _FAILURE_HANDLERS.get(kind)


def registered_kinds() -> list[str]:
    return sorted(_HANDLERS)
