"""Signals that tell the layers above memconfig of config changes, without importing them.

An app above memconfig connects a receiver from its AppConfig.ready() (search re-embeds a
project when its embedder changes). The writing service sends the signal inside its transaction,
so what receivers write commits or rolls back with the change itself, and a receiver that raises
undoes the change; anything that must wait for the commit waits on its own (job_enqueue
dispatches on commit).
"""

from django.dispatch import Signal

# Sent with project_id= when a project's embedder settings (a project-only setting) change.
embedder_changed = Signal()
