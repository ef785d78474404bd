"""`[[MEMORY: fact]]` in an agent's answer becomes a fact entry, after the append commits.

The message is stored as it was sent; a background job reads the facts out of it, so the append
never waits for the embedder that entry dedupe may call.
"""

import logging

from apps.core.errors import ApplicationError, NotFound
from apps.episodic.models import EntryKind, EntrySource
from apps.episodic.services import entry_create
from apps.jobs.registry import job_handler
from apps.jobs.services import job_enqueue
from apps.threads.action_tokens import action_tokens
from apps.threads.models import Role
from apps.threads.selectors import messages_by_id, thread_for_operator

logger = logging.getLogger(__name__)
JOB_KIND = "episodic.memory_actions"


def memory_actions(text: str) -> list[tuple[str, str]]:
    """Return (fact, the action as written) for each [[MEMORY: fact]] in text, in order."""
    return [(token.argument, token.written) for token in action_tokens(text, name="MEMORY")]


def memory_actions_enqueue(*, thread, messages) -> None:
    """Queue the job that stores the facts of the assistant messages just appended."""
    ids = [
        str(message.id)
        for message in messages
        if message.role == Role.ASSISTANT and "[[MEMORY:" in message.content
    ]
    if ids:
        # Keyed by the first message: a repeated notification queues the same job once.
        payload = {"thread_id": str(thread.id), "message_ids": ids}
        job_enqueue(kind=JOB_KIND, key=ids[0], payload=payload)


@job_handler(JOB_KIND)
def run_memory_actions(job) -> None:
    """Store each fact as a `fact` entry with its message as provenance (idempotent: a fact
    stored before is found again by its hash)."""
    try:
        thread = thread_for_operator(thread_id=job.payload["thread_id"])
    except NotFound:
        return  # deleted since: nothing left to remember
    agent = thread.agent
    for message in messages_by_id(thread=thread, ids=job.payload["message_ids"]).values():
        for fact, action in memory_actions(message.content):
            try:
                entry_create(
                    agent=agent,
                    resource=thread.resource,
                    content=fact,
                    source=EntrySource.MEMORY_ACTION,
                    evidence=action,
                    thread=thread,
                    message=message,
                    kind=EntryKind.FACT,
                    actor=f"agent:{agent.project.slug}/{agent.slug}",
                )
            except ApplicationError as error:  # too long, say: skip it, keep the others
                logger.warning("memory action in message %s not stored: %s", message.id, error)
