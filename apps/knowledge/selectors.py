"""Reads of knowledge bases, scoped to one project."""

import uuid
from dataclasses import dataclass

from django.db.models import Count

from apps.core.errors import ApplicationError, NotFound
from apps.core.text import name_normalise, name_problem
from apps.knowledge.models import Chunk, Document, KnowledgeBase
from apps.search.models import ItemKind
from apps.search.selectors import search_for_agent, similarity_floor
from apps.tenancy.models import Project


def knowledge_base_list(*, project: Project):
    return KnowledgeBase.objects.filter(project=project)


def knowledge_base_slug_clean(slug: str) -> str:
    """Return a knowledge base's slug in NFC and case-folded (kb-a and KB-A are one base), or
    refuse it (400 naming slug) with control or bidirectional control characters."""
    slug = name_normalise(slug).casefold()
    problem = name_problem(slug)
    if problem:
        message = f"{slug!r} {problem}."
        raise ApplicationError(f"slug: {message}", details={"slug": [message]})
    return slug


def knowledge_base_get(*, project: Project, slug: str) -> KnowledgeBase:
    slug = knowledge_base_slug_clean(slug)
    kb = KnowledgeBase.objects.filter(project=project, slug=slug).first()
    if kb is None:
        raise NotFound(f"No knowledge base {slug!r} in this project.")
    return kb


def document_list(*, kb: KnowledgeBase, status: str | None = None):
    documents = (
        Document.objects.filter(knowledge_base=kb)
        .select_related("knowledge_base")
        .order_by("-created_at", "-id")
    )
    if status is not None:
        documents = documents.filter(status=status)
    return documents


def document_get(*, project: Project, document_id: uuid.UUID) -> Document:
    document = (
        Document.objects.select_related("knowledge_base")
        .filter(knowledge_base__project=project, pk=document_id)
        .first()
    )
    if document is None:
        raise NotFound("No such document.")
    return document


def document_exists(*, document_id: uuid.UUID) -> bool:
    """Say whether the document is still there (a write naming it may have raced its deletion)."""
    return Document.objects.filter(pk=document_id).exists()


def chunk_list(*, document: Document):
    return Chunk.objects.filter(document=document).order_by("chunk_index")


def document_counts() -> dict[str, int]:
    return dict(Document.objects.values_list("status").annotate(n=Count("id")))


# --- Console: curators see the knowledge bases of every project --------------------------------


def knowledge_base_browse(*, project_id=None):
    """Return the knowledge bases of every project (or of one) with their document counts."""
    kbs = (
        KnowledgeBase.objects.select_related("project")
        .annotate(document_count=Count("documents"))
        .order_by("project__slug", "slug")
    )
    if project_id:
        kbs = kbs.filter(project_id=project_id)
    return kbs


def knowledge_base_by_id(*, kb_id: uuid.UUID) -> KnowledgeBase:
    kb = KnowledgeBase.objects.select_related("project").filter(pk=kb_id).first()
    if kb is None:
        raise NotFound("No such knowledge base.")
    return kb


def knowledge_base_sizes(*, kb: KnowledgeBase) -> dict[str, int]:
    """How many documents and chunks the knowledge base holds (what deleting it removes)."""
    return {
        "documents": Document.objects.filter(knowledge_base=kb).count(),
        "chunks": Chunk.objects.filter(document__knowledge_base=kb).count(),
    }


def knowledge_base_status_counts(*, kb: KnowledgeBase) -> dict[str, int]:
    """Return the number of the knowledge base's documents per status."""
    return dict(
        Document.objects.filter(knowledge_base=kb)
        .values_list("status")
        .annotate(n=Count("id"))
        .order_by()
    )


def document_by_id(*, document_id: uuid.UUID) -> Document:
    document = (
        Document.objects.select_related("knowledge_base__project", "source")
        .filter(pk=document_id)
        .first()
    )
    if document is None:
        raise NotFound("No such document.")
    return document


@dataclass(frozen=True)
class FoundChunk:
    chunk: Chunk
    score: float
    signals: dict


def chunk_search(
    *,
    agent,
    knowledge_base: KnowledgeBase,
    query: str,
    top_k: int,
    min_similarity: float | None = None,
) -> tuple[list[FoundChunk], list[dict]]:
    """Return the knowledge base's chunks ranked for the query, and the search's warnings;
    min_similarity defaults to the agent's search_min_similarity."""
    found = search_for_agent(
        agent=agent,
        query=query,
        kinds=[ItemKind.CHUNK],
        knowledge_base_ids=(knowledge_base.id,),
        top_k=top_k,
        floor=similarity_floor(agent=agent, value=min_similarity),
    )
    chunks = Chunk.objects.in_bulk([hit.id for hit in found.hits])
    hits = [
        FoundChunk(chunks[hit.id], hit.score, hit.signals) for hit in found.hits if hit.id in chunks
    ]
    return hits, found.warnings
