"""Writes of plans, iteration logs, checkpoints, snapshots and artifacts."""

import hashlib
import mimetypes
import re

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from apps.audit.services import audit_record, audit_subject
from apps.core.database import delete_or_not_found, refuse_if_deleted
from apps.core.errors import ApplicationError, Conflict, NotFound, PayloadTooLarge
from apps.core.text import text_problem
from apps.runstate.models import (
    Artifact,
    Checkpoint,
    CheckpointStatus,
    IterationLog,
    Plan,
    RunSnapshot,
)
from apps.search.indexing import index_artifact
from apps.threads.models import OPEN_STATUSES, Run, RunStatus, Thread


def plan_put(*, thread: Thread, expected_version: int, fields: dict) -> Plan:
    """Replace the plan if its version is still expected_version (0 = no plan yet), else 409."""
    _refuse_repeated_step_ids(fields.get("steps") or [])
    if expected_version == 0:
        try:
            with transaction.atomic():
                return Plan.objects.create(thread=thread, version=1, **fields)
        except IntegrityError:
            _raise_stale(thread, expected_version)
    with transaction.atomic():
        updated = Plan.objects.filter(thread=thread, version=expected_version).update(
            version=F("version") + 1, updated_at=timezone.now(), **fields
        )
        if updated:
            # Read while the update's row lock is held, so a concurrent writer's next version
            # is not answered as this one.
            return Plan.objects.get(thread=thread)
    _raise_stale(thread, expected_version)


def _refuse_repeated_step_ids(steps: list[dict]) -> None:
    """A step's id names one step: an agent marking "s1" done could not say which it meant."""
    first: dict[str, int] = {}
    for index, step in enumerate(steps):
        step_id = step.get("id")
        if step_id is None:
            continue
        if step_id in first:
            raise ApplicationError(
                f"steps[{index}].id: {step_id!r} is the id of steps[{first[step_id]}] too; give "
                "each step its own id, or none.",
                details={f"steps[{index}].id": ["Repeats the id of another step."]},
            )
        first[step_id] = index


def _raise_stale(thread: Thread, expected_version: int):
    # A thread deleted meanwhile took its plan along (or failed the new plan's foreign key):
    # that is the thread gone, not a version to read again.
    refuse_if_deleted({"thread": thread})
    current = Plan.objects.filter(thread=thread).values_list("version", flat=True).first() or 0
    raise Conflict(
        f"Plan version is {current}, not {expected_version}: reload the plan and apply your "
        "change to the current version.",
        details={"current_version": current},
        code="stale_version",
    )


def iteration_append(
    *,
    thread: Thread,
    task: str,
    outcome: str,
    run: Run | None = None,
    summary: str = "",
    error: str = "",
    metadata: dict | None = None,
) -> IterationLog:
    """Log the next attempt of a task; attempts are numbered 1, 2, 3, … per task and thread.

    The thread row is locked (PostgreSQL: FOR UPDATE; SQLite: the IMMEDIATE transaction) while
    the next number is counted and taken, so concurrent attempts queue instead of colliding:
    retrying on the unique constraint answered 409 once a request lost five times in a row.
    """
    with transaction.atomic():
        Thread.objects.select_for_update().values_list("pk").get(pk=thread.pk)
        last = IterationLog.objects.filter(thread=thread, task=task).aggregate(n=Max("attempt"))
        return IterationLog.objects.create(
            thread=thread,
            run=run,
            task=task,
            attempt=(last["n"] or 0) + 1,
            outcome=outcome,
            summary=summary,
            error=error,
            metadata=metadata or {},
        )


def checkpoint_create(*, run: Run, state: dict, reason: str = "") -> Checkpoint:
    """Suspend a running run's state for a human to resume; a finished run is a 409.

    The run reads `suspended` until every checkpoint of it is resumed (one run may wait on
    several, an approval per tool call, say). The run's row is locked while the checkpoint is
    written, so a finish or a resume sent at the same moment comes after it (on SQLite every
    write transaction is serial already).
    """
    with transaction.atomic():
        status = _lock_run(run.pk)
        if status not in OPEN_STATUSES:
            raise Conflict(
                f"Run is {status}: only a running or suspended run takes a checkpoint.",
                details={"status": status},
            )
        checkpoint = Checkpoint.objects.create(run=run, state=state, reason=reason)
        if status == RunStatus.RUNNING:
            Run.objects.filter(pk=run.pk).update(
                status=RunStatus.SUSPENDED, updated_at=checkpoint.created_at
            )
        return checkpoint


def _lock_run(run_id) -> str:
    """Lock the run's row for this transaction and return its status; a 404 if it is gone."""
    status = (
        Run.objects.select_for_update().filter(pk=run_id).values_list("status", flat=True).first()
    )
    if status is None:
        raise NotFound("Run not found.")
    return status


def _waits(run_id) -> bool:
    """Whether the run has a checkpoint no one has resumed."""
    return Checkpoint.objects.filter(run_id=run_id, status=CheckpointStatus.SUSPENDED).exists()


def checkpoint_resume(
    *, checkpoint: Checkpoint, resume_input=None, actor: str = "unknown"
) -> Checkpoint:
    """Mark the checkpoint resumed; of concurrent callers exactly one wins, the rest get 409.

    The winner is audited (who resumed it, with what input); the console shows it by the
    checkpoint.
    """
    now = timezone.now()
    with transaction.atomic():
        run_status = _lock_run(checkpoint.run_id)
        claimed = Checkpoint.objects.filter(
            pk=checkpoint.pk, status=CheckpointStatus.SUSPENDED
        ).update(
            status=CheckpointStatus.RESUMED,
            resume_input=resume_input,
            resumed_at=now,
            updated_at=now,
        )
        if claimed and run_status == RunStatus.SUSPENDED and not _waits(checkpoint.run_id):
            Run.objects.filter(pk=checkpoint.run_id).update(
                status=RunStatus.RUNNING, updated_at=now
            )
        if claimed:
            project_id, agent_id, resource_id = (
                Checkpoint.objects.filter(pk=checkpoint.pk)
                .values_list(
                    "run__thread__agent__project_id",
                    "run__thread__agent_id",
                    "run__thread__resource_id",
                )
                .first()
            )
            audit_record(
                actor=actor,
                action="checkpoint.resume",
                object_type="checkpoint",
                object_id=checkpoint.pk,
                project_id=project_id,
                summary=checkpoint.reason or "checkpoint resumed",
                before={"status": CheckpointStatus.SUSPENDED},
                after={"status": CheckpointStatus.RESUMED, "resume_input": resume_input},
                subject=audit_subject(agent_id, resource_id),
            )
    checkpoint.refresh_from_db()
    if not claimed:
        raise Conflict(
            f"Checkpoint was already resumed at {checkpoint.resumed_at.isoformat()}.",
            code="already_resumed",
        )
    return checkpoint


def snapshot_put(*, run: Run, tree: dict) -> RunSnapshot:
    """Store the run's snapshot, replacing an earlier one."""
    for _ in range(3):
        with transaction.atomic():
            updated = RunSnapshot.objects.filter(run=run).update(
                tree=tree, version=F("version") + 1, updated_at=timezone.now()
            )
            if updated:
                # Read while the update's row lock is held: the answer is this write's version
                # and tree, not those of a request that updated a moment later.
                return RunSnapshot.objects.get(run=run)
        try:
            with transaction.atomic():
                return RunSnapshot.objects.create(run=run, tree=tree)
        except IntegrityError:
            refuse_if_deleted({"run": run})  # its foreign key failed: the run went with its thread
            continue  # created concurrently; update it on the next pass
    raise Conflict("The snapshot was changed concurrently; retry.")


# --- Artifacts -------------------------------------------------------------------------------

_KIND = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
# type/subtype and optional parameters, as a Content-Type header carries it.
_CONTENT_TYPE = re.compile(r"^[\w.+-]+/[\w.+-]+(\s*;\s*[\w.+-]+=(\"[^\"\r\n]*\"|[\w.+-]+))*$")


def artifact_create(
    *,
    run: Run,
    name: str,
    content: bytes,
    kind: str = "file",
    content_type: str = "",
    actor: str,
    field: str = "content",
) -> Artifact:
    """Keep a file the run produced, with its SHA-256, under the run's thread.

    field names the input the bytes came from (file or content), for the 413 and 400 answers.
    An empty content_type is guessed from the name (text is marked UTF-8).
    """
    if len(content) > settings.ARTIFACT_MAX_BYTES:
        raise PayloadTooLarge(
            f"{field}: {len(content)} bytes; the limit is {settings.ARTIFACT_MAX_BYTES} bytes "
            "(ARTIFACT_MAX_BYTES). Split it.",
            details={"limit_bytes": settings.ARTIFACT_MAX_BYTES},
        )
    problem = text_problem(name)
    if not name or "/" in name or "\\" in name or name in {".", ".."} or problem:
        raise ApplicationError(
            f"name: {problem or 'must be a plain file name without folders'}, e.g. spec.md."
        )
    if len(name) > 255:
        raise ApplicationError(f"name: {len(name)} characters; at most 255.")
    if not _KIND.match(kind):
        raise ApplicationError(
            "kind: lowercase letters, digits, '_', '.' or '-', at most 64, e.g. 'spec'."
        )
    if not content_type:
        content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    if len(content_type) > 255 or not _CONTENT_TYPE.match(content_type):
        raise ApplicationError("content_type: must look like 'text/markdown' or 'image/png'.")
    content_type = _with_charset(content_type, content, field)
    with transaction.atomic():
        artifact = Artifact.objects.create(
            thread_id=run.thread_id,
            run=run,
            name=name,
            kind=kind,
            content_type=content_type,
            size_bytes=len(content),
            sha256=hashlib.sha256(content).hexdigest(),
            content=content,
            created_by=actor,
        )
        artifact_index(artifact=artifact, thread=run.thread)
        _artifact_audit(artifact, actor, "artifact.create", before=None, after=_about(artifact))
    return artifact


def content_charset(content_type: str) -> str | None:
    """The charset a Content-Type names, or None; an unknown one is a 400 naming content_type."""
    match = re.search(r";\s*charset=\"?([\w.+-]+)", content_type, re.IGNORECASE)
    if match is None:
        return None
    try:
        "".encode(match.group(1))  # a text encoding: Python's codecs also hold rot13 and base64
        return match.group(1)  # as sent: a message names it so
    except LookupError:
        raise ApplicationError(
            f"content_type: charset {match.group(1)!r} is not one this server knows; send "
            "charset=utf-8, or leave the charset out."
        ) from None


def _with_charset(content_type: str, content: bytes, field: str) -> str:
    """The content type as served: text its bytes are not in the charset it names is refused
    (a browser would read "café" sent as UTF-8 under latin-1 as "cafÃ©"); text naming none is
    marked UTF-8 when it is UTF-8, and left unmarked when it is not."""
    charset = content_charset(content_type)
    if charset is not None:
        try:
            content.decode(charset)
        except UnicodeDecodeError:
            raise ApplicationError(
                f"{field}: not valid {charset}, the charset content_type names; send the text "
                "in that charset, or name the one it is in."
            ) from None
        return content_type
    if content_type.startswith("text/"):
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            return content_type
        return content_type + "; charset=utf-8"
    return content_type


def artifact_index(*, artifact: Artifact, thread: Thread) -> bool:
    """Index a text artifact for search under its thread; binary ones are not searched."""
    text = artifact_text(artifact)
    if text:
        index_artifact(
            artifact=artifact,
            project_id=thread.agent.project_id,
            agent_id=thread.agent_id,
            resource_id=thread.resource_id,
            text=text,
        )
    return bool(text)


# Content types searched as text besides text/*: what agents write as specs and results.
_TEXT_TYPES = {"application/json", "application/xml", "application/yaml", "application/x-yaml"}


def artifact_text(artifact: Artifact) -> str:
    """Return a text artifact's content as text ("" for binary ones, which are not searched)."""
    media = artifact.content_type.split(";", 1)[0].strip().lower()
    if not (media.startswith("text/") or media in _TEXT_TYPES):
        return ""
    try:  # in the charset it was stored under (checked then; older rows may name any)
        charset = content_charset(artifact.content_type) or "utf-8"
    except ApplicationError:
        charset = "utf-8"
    try:
        text = bytes(artifact.content).decode(charset)
    except UnicodeDecodeError:
        return ""
    return "" if "\x00" in text else text  # a database text column cannot hold NUL


def artifact_delete(*, artifact: Artifact, actor: str) -> None:
    with transaction.atomic():
        _artifact_audit(artifact, actor, "artifact.delete", before=_about(artifact), after=None)
        delete_or_not_found(artifact, "artifact")


def _about(artifact: Artifact) -> dict:
    fields = ("name", "kind", "content_type", "size_bytes", "sha256")
    return {"run_id": str(artifact.run_id), **{name: getattr(artifact, name) for name in fields}}


def _artifact_audit(artifact: Artifact, actor: str, action: str, *, before, after) -> None:
    audit_record(
        actor=actor,
        action=action,
        object_type="artifact",
        object_id=artifact.id,
        project_id=artifact.run.thread.agent.project_id,
        summary=artifact.name,
        before=before,
        after=after,
        subject=audit_subject(artifact.run.thread.agent_id, artifact.run.thread.resource_id),
    )
