"""Signals that tell the layers above threads of new messages, without importing them.

Memory that forms from messages (observations, entries from `[[MEMORY: …]]`) lives in apps above
this one. Each connects a receiver from its AppConfig.ready(); the append sends the signal inside
its transaction, so what receivers write (typically a queued job, dispatched on commit) commits
or rolls back with the messages themselves.
"""

from django.dispatch import Signal

# Sent with thread= and messages= (the newly stored ones, not replays) after each append.
messages_appended = Signal()
