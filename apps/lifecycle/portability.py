"""Export one project's whole memory state to JSON lines, and import it into another database.

Which rows belong to a project is read from the models themselves: every model of our apps
with a chain of foreign keys to tenancy.Project is exported (a model added later is exported
without a change here), except those in NOT_EXPORTED, each with its reason. Rows are written
with Django's "python" serializer, one JSON object per line:

    {"type": "header", "format": "memory-console-export", "version": 1, "project": "acme", ...}
    {"type": "threads.message", "id": "…", "fields": {"thread": "…", "seq": 3, ...}}
    {"type": "file", "name": "documents/2026/11/a.pdf", "content_base64": "…"}

Rows keep their ids, seqs, versions, statuses and timestamps: the importer saves them "raw" (as
loaddata does), so auto_now fields keep the exported time. Foreign keys are checked at commit
(Django creates them deferrable on PostgreSQL and SQLite), so self-references such as an entry's
supersedes link need no ordering; rows are still written parents first, for a reader's sake.

Search items and vectors are not exported: the importer indexes the messages, entries, notes and
chunks again through apps.search.indexing, and queues their embedding with its own embedder.
"""

import base64
import datetime
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator

from django.apps import apps
from django.core import serializers
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Model, Q
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.episodic.models import EntryStatus, MemoryEntry
from apps.knowledge.models import Chunk, Document, DocumentStatus
from apps.notes.models import Note
from apps.notes.services import search_text
from apps.runstate.models import Artifact
from apps.runstate.services import artifact_index
from apps.search.indexing import index_chunks, index_entry, index_messages, index_note
from apps.tenancy.models import Project
from apps.threads.models import Message, Thread

FORMAT = "memory-console-export"
VERSION = 1

# Models with a path to a project that are deliberately left out, and why.
NOT_EXPORTED = {
    "tenancy.ApiKey": "API keys' secrets never leave the database; issue new keys after import",
    "search.SearchItem": "the importer indexes the rows again",
    "search.ItemEmbedding": "the importer's embedder makes the vectors again",
    "search.VectorIndex": "the importer's embedder makes the vectors again",
}


class ImportRefused(ApplicationError):
    status_code = 409
    code = "import_refused"


def exported_models() -> list[type[Model]]:
    """Every model of our apps that belongs to a project, parents before children."""
    found = [
        model
        for model in apps.get_models()
        if model.__module__.startswith("apps.")
        and model._meta.label not in NOT_EXPORTED
        and _project_paths(model)
    ]
    return _parents_first(found)


def project_rows(model: type[Model], project: Project):
    """The model's rows that belong to the project, by any of its foreign-key paths to it."""
    where = Q()
    for path in _project_paths(model):
        where |= Q(**{path: project.pk})
    return model._default_manager.filter(where).distinct().order_by("pk")


def project_export(*, project: Project, out) -> dict[str, int]:
    """Write the project's rows (and its uploaded files) to out as JSON lines; return counts."""
    counts: dict[str, int] = {}
    models = exported_models()
    header = {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "project": project.slug,
        "project_id": str(project.pk),
        "exported_at": timezone.now().isoformat(),
        "not_exported": NOT_EXPORTED,
    }
    out.write(_line(header))
    files: list[str] = []
    for model in models:
        label = model._meta.label_lower
        counts[label] = 0
        for row in _serialized(project_rows(model, project).iterator(chunk_size=500)):
            out.write(_line({"type": label, "id": row["pk"], "fields": row["fields"]}))
            counts[label] += 1
            if model is Document and row["fields"].get("file"):
                files.append(row["fields"]["file"])
    for name in files:
        if default_storage.exists(name):
            with default_storage.open(name, "rb") as handle:
                content = base64.b64encode(handle.read()).decode("ascii")
            out.write(_line({"type": "file", "name": name, "content_base64": content}))
            counts["files"] = counts.get("files", 0) + 1
    return counts


def project_import(*, lines: Iterable[str]) -> dict[str, int]:
    """Load an export into this database; refuse if any of its rows is here already.

    1. Read and check the header; refuse when the project (by id or slug) exists here, or when
       any exported id is already taken (a clash would overwrite another project's row).
    2. In one transaction: save every row raw, restore the uploaded files, bring PostgreSQL's
       sequences past the imported integer ids, and index the project for search again.
    """
    # The whole file is read before anything is written, so that a refused import changes
    # nothing; a project's rows fit in memory as they fit in one transaction.
    records = [json.loads(line) for line in lines if line.strip()]
    if not records or records[0].get("type") != "header" or records[0].get("format") != FORMAT:
        raise ImportRefused("The file is not a Memory Console export (no header line).")
    header, rows = records[0], records[1:]
    if header.get("version") != VERSION:
        raise ImportRefused(f"Export version {header.get('version')!r} is not {VERSION}.")
    slug = header["project"]
    if Project.objects.filter(Q(pk=header["project_id"]) | Q(slug=slug)).exists():
        raise ImportRefused(
            f"Project {slug!r} already exists in this database: delete it first, "
            "or import into another database."
        )
    by_type: dict[str, list[dict]] = defaultdict(list)
    for record in rows:
        by_type[record["type"]].append(record)
    known = {model._meta.label_lower: model for model in exported_models()}
    unknown = set(by_type) - set(known) - {"file"}
    if unknown:
        raise ImportRefused(f"Unknown row types {sorted(unknown)}: export from a matching version.")
    for label, records_of in by_type.items():
        if label == "file" or _outlives_project(known[label]):
            continue
        ids = [record["id"] for record in records_of]
        for start in range(0, len(ids), 500):
            if known[label]._default_manager.filter(pk__in=ids[start : start + 500]).exists():
                raise ImportRefused(f"Some {label} ids of the export already exist here.")
    counts: dict[str, int] = {}
    with transaction.atomic():
        for label, model in known.items():
            python = [
                {"model": label, "pk": record["id"], "fields": record["fields"]}
                for record in by_type.get(label, [])
            ]
            # Rows that outlive their project (the audit log) are here still when the project
            # was deleted from this database: they are attached to it again, as exported.
            insert_only = not _outlives_project(model)
            for found in serializers.deserialize("python", python):
                found.save(force_insert=insert_only)
            counts[label] = len(python)
        for record in by_type.get("file", []):
            _file_restore(record["name"], base64.b64decode(record["content_base64"]))
        counts["files"] = len(by_type.get("file", []))
        _sequences_reset(list(known.values()))
        project = Project.objects.get(pk=header["project_id"])
        counts["search_items"] = _reindex(project)
    return counts


def _reindex(project: Project) -> int:
    """Index the project's messages, entries, notes, chunks and artifacts as their services do."""
    made = 0
    threads = Thread.objects.filter(agent__project=project).select_related("agent")
    for thread in threads:
        first = Message.objects.filter(thread=thread).order_by("seq").first()
        if first is not None:
            index_messages(thread=thread, messages=[first])
            made += Message.objects.filter(thread=thread).count()
    for entry in MemoryEntry.objects.filter(agent__project=project).select_related("agent"):
        index_entry(entry=entry, visible=entry.status == EntryStatus.APPROVED)
        made += 1
    for note in Note.objects.filter(project=project):
        index_note(note=note, content=search_text(note))
        made += 1
    documents = Document.objects.filter(knowledge_base__project=project)
    for document in documents.select_related("knowledge_base"):
        chunks = list(Chunk.objects.filter(document=document).order_by("pk"))
        if chunks:
            index_chunks(
                document=document, chunks=chunks, visible=document.status == DocumentStatus.READY
            )
            made += len(chunks)
    for artifact in Artifact.objects.filter(thread__agent__project=project).select_related(
        "thread__agent"
    ):
        made += artifact_index(artifact=artifact, thread=artifact.thread)
    return made


def _file_restore(name: str, content: bytes) -> None:
    if default_storage.exists(name):
        with default_storage.open(name, "rb") as handle:
            if handle.read() == content:
                return
        raise ImportRefused(f"A different file is stored at {name!r} already.")
    saved = default_storage.save(name, ContentFile(content))
    if saved != name:  # the storage would not keep the name: the documents would point nowhere
        default_storage.delete(saved)
        raise ImportRefused(f"The file {name!r} could not be stored under its own name.")


def _sequences_reset(models: list[type[Model]]) -> None:
    """Move PostgreSQL's id sequences past the imported ids (SQLite needs nothing)."""
    statements = connection.ops.sequence_reset_sql(no_style(), models)
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def _outlives_project(model: type[Model]) -> bool:
    """Whether the model's rows stay when their project is deleted (project set to NULL)."""
    return any(
        field.is_relation
        and field.related_model is Project
        and field.remote_field.on_delete.__name__ == "SET_NULL"
        for field in model._meta.concrete_fields
    )


def _project_paths(model: type[Model], seen: tuple = ()) -> list[str]:
    """The lookups from the model to its project's id, one per foreign key that leads there."""
    if model is Project:
        return ["pk"]
    paths = []
    for field in model._meta.concrete_fields:
        target = field.related_model if field.is_relation else None
        if target is None or target is model or target in seen:
            continue
        if target is Project:
            paths.append(field.name)
            continue
        deeper = _project_paths(target, (*seen, model))
        if deeper:
            paths.append(f"{field.name}__{deeper[0]}")
    return paths


def _parents_first(models: list[type[Model]]) -> list[type[Model]]:
    ordered: list[type[Model]] = []
    pending = list(models)
    while pending:
        for model in pending:
            parents = {
                field.related_model
                for field in model._meta.concrete_fields
                if field.is_relation and field.related_model is not model
            }
            if not (parents & set(pending)):
                ordered.append(model)
                pending.remove(model)
                break
        else:  # a cycle between models: keep the rest as found (constraints are deferred)
            ordered.extend(pending)
            break
    return ordered


def _serialized(rows) -> Iterator[dict]:
    yield from serializers.serialize("python", rows)


class _Encoder(DjangoJSONEncoder):
    """DjangoJSONEncoder cuts times to milliseconds; an export keeps every microsecond."""

    def default(self, o):
        if isinstance(o, datetime.datetime | datetime.time):
            return o.isoformat()
        return super().default(o)


def _line(record: dict) -> str:
    return json.dumps(record, cls=_Encoder, ensure_ascii=False) + "\n"
