"""Forget one end user of an agent: delete everything of theirs and say how much, per kind."""

from collections import Counter

from django.db import transaction

from apps.audit.services import audit_record, audit_redact, audit_redact_subject, audit_subject
from apps.core.database import deleted_text_release
from apps.core.errors import NotFound
from apps.lifecycle.registry import AUDITED, KINDS, Scope, kind_name
from apps.search.indexing import lexical_index_compact
from apps.tenancy.models import Agent
from apps.tenancy.selectors import resource_find
from apps.threads.models import Thread


def resource_forget(*, agent: Agent, resource_external_id: str, actor: str) -> dict[str, int]:
    """Delete every row of one end user of an agent; return the count deleted per kind.

    1. Find the end user in the agent's project and lock the agent's threads with them, so that
       no message is appended to one while it is being deleted. 404 when the project has no
       such end user or the agent keeps nothing of theirs.
    2. Delete each registered root's rows in the scope, in order; Django's delete() counts every
       row it removes, the CASCADE-deleted ones included, per model. Every registered kind is
       reported, 0 when it had nothing.
    3. Delete the end user's own row when nothing of any agent refers to it any more.
    4. Blank the words in the audit rows of what was deleted, and of anything the agent kept of
       the end user and deleted earlier (who, when and what kind stay), and record the counts
       (the counts only: what was forgotten stays forgotten).
    5. After the commit, leave no copy of the words in the database files either: the lexical
       index drops its deleted entries, and on SQLite (secure_delete zeroes freed pages) the
       write-ahead log is checkpointed and truncated.
    """
    resource = resource_find(project=agent.project, external_id=resource_external_id)
    if resource is None:
        raise NotFound(f"resource_id: no end user {resource_external_id!r} in this project.")
    deleted: Counter[str] = Counter({kind.name: 0 for kind in KINDS.values()})
    with transaction.atomic():
        thread_ids = tuple(
            Thread.objects.select_for_update()
            .filter(agent=agent, resource=resource)
            .values_list("pk", flat=True)
        )
        scope = Scope(agent=agent, resource=resource, thread_ids=thread_ids)
        roots = [kind.roots(scope) for kind in KINDS.values() if kind.roots is not None]
        if not any(rows.exists() for rows in roots):
            # Another agent's end user, or one already forgotten: as for any object not its own.
            raise NotFound(
                f"resource_id: this agent keeps nothing of end user {resource_external_id!r}."
            )
        audited = {
            object_type: [str(pk) for pk in rows(scope).values_list("pk", flat=True)]
            for object_type, rows in AUDITED.items()
        }
        for kind in KINDS.values():
            if kind.roots is None:
                continue
            _, per_model = kind.roots(scope).delete()
            for label, count in per_model.items():
                deleted[kind_name(label)] += count
        resource_pk, deleted["resources"] = resource.pk, 0
        if not _referenced(resource):
            _, per_model = resource.delete()
            deleted["resources"] = per_model.get("tenancy.Resource", 0)
        for object_type, object_ids in audited.items():
            audit_redact(object_type=object_type, object_ids=object_ids)
        # Also the rows of objects deleted before today (an entry deleted by id, say).
        audit_redact_subject(subject=audit_subject(agent.pk, resource_pk))
        audit_record(
            actor=actor,
            action="resource.forget",
            object_type="resource",
            object_id=str(resource_pk),
            project_id=agent.project_id,
            summary=f"forgot end user {resource_external_id[:200]} of {agent.slug}",
            after=dict(deleted),
        )
        transaction.on_commit(_release_deleted_text)
    return dict(deleted)


def _release_deleted_text() -> None:
    lexical_index_compact()
    deleted_text_release()


def _referenced(resource) -> bool:
    """Return whether any row (of any agent, any model) still refers to the resource."""
    for relation in resource._meta.related_objects:
        if relation.many_to_many or not relation.field.concrete:
            continue
        model = relation.related_model
        if model._default_manager.filter(**{relation.field.name: resource}).exists():
            return True
    return False
