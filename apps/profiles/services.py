"""Writes of user profiles and session memory: whole replacements, compare-and-set by version."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from django.db import IntegrityError, models, transaction
from django.db.models import F
from django.utils import timezone

from apps.audit.services import audit_record, audit_subject
from apps.core.database import refuse_if_deleted
from apps.core.errors import ApplicationError, Conflict
from apps.core.text import text_problem
from apps.profiles.models import (
    LIST_ITEM_MAX_CHARS,
    LIST_MAX_ITEMS,
    OBJECTIVE_MAX_CHARS,
    PROFILE_MAX_CHARS,
    STATE_MAX_CHARS,
    SessionMemory,
    UserProfile,
)
from apps.tenancy.selectors import resource_find
from apps.tenancy.services import resource_get_or_create
from apps.threads.selectors import thread_get

# Resource.external_id's column.
RESOURCE_ID_MAX_CHARS = 200

if TYPE_CHECKING:  # other areas' models only as types: their rows come through their selectors
    from apps.tenancy.models import Agent


def profile_put(
    *, agent: Agent, resource_external_id: str, content: str, version: int, actor: str
) -> UserProfile:
    """Replace the agent's profile of an end user if `version` is still current (0: none yet).

    The end user is created in the agent's project on the first write; a stale version is a 409
    with the current version in details.
    """
    _check_text("resource_id", resource_external_id, RESOURCE_ID_MAX_CHARS)
    _check_text("content", content, PROFILE_MAX_CHARS)
    if version == 0:
        resource = resource_get_or_create(project=agent.project, external_id=resource_external_id)
    else:
        resource = resource_find(project=agent.project, external_id=resource_external_id)
        if resource is None:  # nothing was ever written, so any version but 0 is stale
            _raise_stale("Profile", UserProfile.objects.none(), version)
    return _compare_and_set(
        owner={"end user": resource},
        rows=UserProfile.objects.filter(agent=agent, resource=resource),
        create=lambda: UserProfile(agent=agent, resource=resource),
        version=version,
        fields={"content": content},
        actor=actor,
        audit={
            "action": "profile.write",
            "object_type": "user_profile",
            "project_id": agent.project_id,
            "subject": audit_subject(agent.pk, resource.pk),
        },
        summary=f"profile of {resource.external_id}",
        name="Profile",
    )


def session_memory_put(
    *,
    agent: Agent,
    thread_id: uuid.UUID,
    objective: str,
    decisions: list[str],
    state: str,
    follow_ups: list[str],
    version: int,
    actor: str,
) -> SessionMemory:
    """Replace the session memory of the agent's thread if `version` is still current (0: none)."""
    thread = thread_get(agent=agent, thread_id=thread_id)
    _check_text("objective", objective, OBJECTIVE_MAX_CHARS)
    _check_text("state", state, STATE_MAX_CHARS)
    _check_list("decisions", decisions)
    _check_list("follow_ups", follow_ups)
    return _compare_and_set(
        owner={"thread": thread},
        rows=SessionMemory.objects.filter(thread=thread),
        create=lambda: SessionMemory(thread=thread),
        version=version,
        fields={
            "objective": objective,
            "decisions": list(decisions),
            "state": state,
            "follow_ups": list(follow_ups),
        },
        actor=actor,
        audit={
            "action": "session_memory.write",
            "object_type": "session_memory",
            "project_id": agent.project_id,
            "subject": audit_subject(agent.pk, thread.resource_id),
        },
        summary=f"session memory of thread {thread.id}",
        name="Session memory",
    )


def _compare_and_set(
    *,
    owner: dict[str, models.Model],
    rows,
    create,
    version: int,
    fields: dict,
    actor: str,
    audit: dict,
    summary: str,
    name: str,
) -> models.Model:
    """Write fields to the one row of `rows` if its version is `version`, and audit the change.

    1. Version 0 creates the row; a concurrent creator makes the unique constraint fail: stale.
    2. Otherwise UPDATE … WHERE version = the expected one: of concurrent writers holding the
       same version exactly one matches a row, the others are stale. Versions only grow, so the
       row read just before is what the update replaced (the audit's "before").
    3. The audit row commits with the write, or neither does.
    4. When the row's owner (its end user or thread) was deleted meanwhile, the write finds no
       row or fails on its foreign key at the commit: a 404 naming the owner, not a stale
       version nor a server failure.
    """
    try:
        return _write_version(rows, create, version, fields, actor, audit, summary, name)
    except (IntegrityError, Conflict):
        refuse_if_deleted(owner)
        raise


def _write_version(rows, create, version, fields, actor, audit, summary, name) -> models.Model:
    with transaction.atomic():
        if version == 0:
            row = create()
            for field, value in fields.items():
                setattr(row, field, value)
            row.updated_by = actor
            try:
                with transaction.atomic():
                    row.save(force_insert=True)
            except IntegrityError:
                _raise_stale(name, rows, version)
            before = None
        else:
            before = rows.filter(version=version).values(*fields).first()
            if before is None:
                _raise_stale(name, rows, version)
            updated = rows.filter(version=version).update(
                version=F("version") + 1, updated_at=timezone.now(), updated_by=actor, **fields
            )
            if not updated:
                _raise_stale(name, rows, version)
            row = rows.get()
        after = {field: getattr(row, field) for field in fields}
        audit_record(
            actor=actor,
            object_id=row.id,
            before=None if before is None else {"version": version, **before},
            after={"version": row.version, **after},
            summary=f"{summary} → v{row.version}",
            **audit,
        )
    return row


def _raise_stale(name: str, rows, version: int):
    current = rows.values_list("version", flat=True).first() or 0
    raise Conflict(
        f"{name} version is {current}, not {version}: read it again and apply your change to "
        "the current version.",
        details={"current_version": current},
        code="stale_version",
    )


def _check_text(field: str, text: str, limit: int) -> None:
    if not isinstance(text, str):
        _refuse(field, "Must be text.")
    if len(text) > limit:
        _refuse(field, f"At most {limit} characters; this has {len(text)}.")
    problem = text_problem(text)
    if problem:
        _refuse(field, f"The text {problem}.")


def _check_list(field: str, items: list[str]) -> None:
    if not isinstance(items, list):
        _refuse(field, "Must be a list of strings.")
    if len(items) > LIST_MAX_ITEMS:
        _refuse(field, f"At most {LIST_MAX_ITEMS} items; this has {len(items)}. Merge some.")
    for index, item in enumerate(items):
        _check_text(f"{field}[{index}]", item, LIST_ITEM_MAX_CHARS)


def _refuse(field: str, message: str):
    raise ApplicationError(f"{field}: {message}", details={field: [message]})
