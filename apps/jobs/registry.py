"""Job kinds and their handlers. Each app registers its handlers from its AppConfig.ready()."""

from collections.abc import Callable

_HANDLERS: dict[str, Callable] = {}


def job_handler(kind: str):
    """Register the decorated function as the handler of jobs of this kind."""

    def register(function: Callable) -> Callable:
        _HANDLERS[kind] = function
        return function

    return register


def handler_for(kind: str) -> Callable | None:
    return _HANDLERS.get(kind)
