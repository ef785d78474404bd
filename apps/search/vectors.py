"""Keep each project's vectors in step with its embedder, in the background.

The job `search.vectors` (one pending per project) embeds items that lack a vector under every
live index of the project. When the configured embedder changes, a new index starts `building`
beside the `ready` one, which serves queries until the new one covers every item.
"""

import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from apps.jobs.services import job_enqueue, job_progress
from apps.memconfig.selectors import config_effective_for_project
from apps.providers.embeddings import embedder_for
from apps.search.backends import backend
from apps.search.item_text import said_text
from apps.search.models import ItemEmbedding, SearchItem, VectorIndex, VectorIndexStatus

logger = logging.getLogger(__name__)
JOB_KIND = "search.vectors"
# An embedder's input limit is in tokens; this many characters stays well inside common limits.
EMBED_TEXT_CHARS = 8000
# Dimensions whose vector index this process has looked for: once each, the job runs after
# every append (an index, once made, stays; a missing one is warned about once).
_CHECKED: set[int] = set()


def vectors_sync_enqueue(*, project_id) -> None:
    """Queue the project's vector job if it has an embedder or live vectors to retire."""
    wanted = config_effective_for_project(project_id=project_id)["embedder_model"]
    live = VectorIndex.objects.filter(project_id=project_id).exclude(
        status=VectorIndexStatus.RETIRED
    )
    if wanted or live.exists():  # no second query when an embedder is configured
        job_enqueue(kind=JOB_KIND, key=str(project_id), payload={"project_id": str(project_id)})


def vector_index_serving(*, project_id) -> VectorIndex | None:
    """Return the index whose vectors answer the project's queries now, if any."""
    return (
        VectorIndex.objects.filter(project_id=project_id, status=VectorIndexStatus.READY)
        .order_by("-ready_at", "-id")
        .first()
    )


@dataclass(frozen=True)
class ServingModel:
    model: str
    dims: int


_NO_VECTORS = ServingModel("", 0)  # cached for a project without a serving index


def vector_model_serving(*, project_id) -> ServingModel | None:
    """Return the model and dimension of vector_index_serving(), which is all a query needs.

    Every search asks this first, so it is kept in the per-process "hot" cache
    (settings.HOT_CACHE_SECONDS); a switch-over or retirement forgets it.
    """
    cache_key = f"vector-model:{project_id}"
    serving = caches["hot"].get(cache_key)
    if serving is None:
        index = vector_index_serving(project_id=project_id)
        serving = ServingModel(index.model, index.dims) if index else _NO_VECTORS
        caches["hot"].set(cache_key, serving)
    return None if serving == _NO_VECTORS else serving


def _forget_serving(project_id) -> None:
    # Now, and again at commit: a search in between may have cached the old index.
    forget = lambda: caches["hot"].delete(f"vector-model:{project_id}")  # noqa: E731
    forget()
    transaction.on_commit(forget)


def vectors_sync(*, project_id, job=None) -> None:
    """Create, fill, switch over and retire the project's vector indexes (idempotent)."""
    config = config_effective_for_project(project_id=project_id)
    target = _target_index(project_id, config["embedder_model"], config["embedder_dimensions"])
    live = VectorIndex.objects.filter(project_id=project_id).exclude(
        status=VectorIndexStatus.RETIRED
    )
    for index in live.order_by("id"):
        if target is None or index.pk != target.pk:
            if index.status == VectorIndexStatus.BUILDING or target is None:
                _retire(index)
            continue
        _fill(index, job)
    if target is not None:
        target.refresh_from_db()
        if target.status == VectorIndexStatus.BUILDING and not _missing(target).exists():
            _switch_over(target)


def _target_index(project_id, model: str, dims: int) -> VectorIndex | None:
    if not model:
        return None
    index, _ = VectorIndex.objects.get_or_create(
        project_id=project_id,
        model=model,
        dims=dims,
        status__in=[VectorIndexStatus.BUILDING, VectorIndexStatus.READY],
        defaults={"status": VectorIndexStatus.BUILDING},
    )
    if dims not in _CHECKED:
        _CHECKED.add(dims)
        if backend().vector_index_missing(dims):
            # Building the index here would hold the job (and, outside CONCURRENTLY, every
            # append) for as long as the table is large: an operator creates it instead.
            logger.warning(
                "No vector index for %s-dimension vectors (%s): searches scan them exactly. "
                "Create it with `manage.py vector_index %s`.",
                dims,
                model,
                dims,
            )
    return index


def _missing(index: VectorIndex):
    has_vector = ItemEmbedding.objects.filter(
        item_id=OuterRef("pk"), model=index.model, dims=index.dims
    )
    return SearchItem.objects.filter(project_id=index.project_id).filter(~Exists(has_vector))


def _fill(index: VectorIndex, job) -> None:
    embedder = embedder_for(index.model, index.dims)
    total = _missing(index).count()
    done = 0
    while True:
        batch = list(_missing(index).order_by("id")[: settings.EMBEDDING_BATCH_SIZE * 4])
        if not batch:
            break
        # Without a message's who/when line: the window boost, not the vectors, reads dates.
        texts = [said_text(item.content)[:EMBED_TEXT_CHARS] for item in batch]
        vectors = embedder.embed(texts)
        ItemEmbedding.objects.bulk_create(
            [_embedding(index, item, vector) for item, vector in zip(batch, vectors, strict=True)],
            ignore_conflicts=True,  # a concurrent or repeated run may have stored some already
        )
        done += len(batch)
        if job is not None:
            job_progress(job=job, done=done, total=max(total, done), note=f"{index.model} vectors")


def _embedding(index: VectorIndex, item: SearchItem, vector) -> ItemEmbedding:
    return ItemEmbedding(
        item=item,
        model=index.model,
        dims=index.dims,
        vector=vector,
        kind=item.kind,
        project_id=item.project_id,
        agent_id=item.agent_id,
        resource_id=item.resource_id,
        thread_id=item.thread_id,
        knowledge_base_id=item.knowledge_base_id,
        visible=item.visible,
    )


def _switch_over(index: VectorIndex) -> None:
    with transaction.atomic():
        index.status = VectorIndexStatus.READY
        index.ready_at = timezone.now()
        index.save(update_fields=["status", "ready_at"])
        _forget_serving(index.project_id)
        older = VectorIndex.objects.filter(
            project_id=index.project_id, status=VectorIndexStatus.READY
        ).exclude(pk=index.pk)
        for old in older:
            _retire(old)
    logger.info("project %s now searches %s/%s vectors", index.project_id, index.model, index.dims)


def _retire(index: VectorIndex) -> None:
    VectorIndex.objects.filter(pk=index.pk).update(status=VectorIndexStatus.RETIRED)
    _forget_serving(index.project_id)
    ItemEmbedding.objects.filter(
        project_id=index.project_id, model=index.model, dims=index.dims
    ).delete()
