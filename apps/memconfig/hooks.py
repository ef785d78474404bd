"""Tell upper layers that config changed, without memconfig importing them.

An app above memconfig registers a callback from its AppConfig.ready() (search re-embeds a
project when its embedder changes). The writing service calls the callbacks inside its
transaction, so what they write commits or rolls back with the change itself; anything that must
wait for the commit waits on its own (job_enqueue dispatches on commit).
"""

from collections.abc import Callable

EmbedderChanged = Callable[..., None]

_embedder_changed: list[EmbedderChanged] = []


def on_embedder_changed(callback: EmbedderChanged) -> EmbedderChanged:
    """Register callback(*, project_id) to run when a project's embedder settings change."""
    if callback not in _embedder_changed:  # ready() may run twice; one call per change
        _embedder_changed.append(callback)
    return callback


def embedder_changed_notify(*, project_id) -> None:
    """Call every registered callback for this project, in the order they were registered."""
    for callback in list(_embedder_changed):
        callback(project_id=project_id)
