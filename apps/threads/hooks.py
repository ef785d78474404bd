"""Tell upper layers that messages were appended, without threads importing them.

Memory that forms from messages (observations, entries from `[[MEMORY: …]]`) lives in apps above
this one. Each registers a callback from its AppConfig.ready(); the append calls them inside its
transaction, so what they write (typically a queued job, dispatched on commit) commits or rolls
back with the messages themselves.
"""

from collections.abc import Callable

MessagesAppended = Callable[..., None]

_appended: list[MessagesAppended] = []


def on_messages_appended(callback: MessagesAppended) -> MessagesAppended:
    """Register callback(*, thread, messages) to run when new messages are stored in a thread."""
    if callback not in _appended:  # ready() may run twice; one call per append
        _appended.append(callback)
    return callback


def messages_appended_notify(*, thread, messages) -> None:
    """Call every registered callback with the thread and its newly stored messages."""
    for callback in list(_appended):
        callback(thread=thread, messages=messages)
