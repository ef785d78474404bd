"""Drop-ins for the memory-upsert / memory-search webhook pair: facts in a knowledge base."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.api.v1.common import ApiView, MetadataField, StrictSerializer, actor_name, principal
from apps.api.v1.search import (
    min_similarity_field,
    warnings_field,
    with_warnings,
)
from apps.core.errors import NotFound
from apps.knowledge.selectors import chunk_search, knowledge_base_get
from apps.knowledge.services import memory_upsert


class UpsertOutSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The chunk id.")
    document_id = serializers.UUIDField()
    namespace = serializers.CharField()
    created = serializers.BooleanField(help_text="False when the same content was stored before.")


class MemoryUpsertApi(ApiView):
    class UpsertInSerializer(StrictSerializer):
        content = serializers.CharField(max_length=20000)
        namespace = serializers.SlugField(max_length=64)
        metadata = MetadataField()

    @extend_schema(
        operation_id="memory_upsert",
        request=UpsertInSerializer,
        responses={201: UpsertOutSerializer, 200: UpsertOutSerializer},
        description="Store a fact in the knowledge base named by `namespace` (created on first "
        "use). It is embedded in the background; identical content is stored once.",
    )
    def post(self, request):
        data = self.UpsertInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        caller = principal(request)
        result = memory_upsert(
            project=caller.project,
            namespace=params["namespace"],
            content=params["content"],
            metadata=params["metadata"],
            actor=actor_name(request),
        )
        body = {
            "id": str(result.chunk.id),
            "document_id": result.document.id,
            "namespace": result.namespace,  # as stored: "KB-A" is the base kb-a
            "created": result.created,
        }
        return Response(
            body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        )


class MemoryHitSerializer(serializers.Serializer):
    id = serializers.CharField()
    content = serializers.CharField()
    score = serializers.FloatField(help_text="Fused score; higher is better.")
    similarity = serializers.FloatField(
        allow_null=True, help_text="Cosine similarity, when the project has vectors."
    )
    metadata = serializers.DictField()


class MemorySearchOutSerializer(serializers.Serializer):
    results = MemoryHitSerializer(many=True)
    warnings = warnings_field()


class MemorySearchApi(ApiView):
    class MemorySearchInSerializer(StrictSerializer):
        query = serializers.CharField(max_length=2000)
        namespace = serializers.SlugField(max_length=64)
        top_k = serializers.IntegerField(min_value=1, max_value=50, default=5)
        min_similarity = min_similarity_field()

    @extend_schema(
        operation_id="memory_search",
        request=MemorySearchInSerializer,
        responses=MemorySearchOutSerializer,
    )
    def post(self, request):
        data = self.MemorySearchInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        project = principal(request).project
        try:
            kb = knowledge_base_get(project=project, slug=params["namespace"])
        except NotFound:
            # Callers of this drop-in know namespaces, not knowledge bases.
            raise NotFound(
                f"No namespace {params['namespace']!r} in this project; "
                "POST /api/v1/memory/upsert creates it."
            ) from None
        agent = principal(request).agent
        hits, warnings = chunk_search(
            agent=agent,
            knowledge_base=kb,
            query=params["query"],
            top_k=params["top_k"],
            min_similarity=params.get("min_similarity"),
        )
        results = [
            {
                "id": str(hit.chunk.id),
                "content": hit.chunk.content,
                "score": hit.score,
                "similarity": hit.signals.get("vector", {}).get("score"),
                "metadata": hit.chunk.metadata,
            }
            for hit in hits
        ]
        body = {"results": MemoryHitSerializer(results, many=True).data}
        return Response(with_warnings(body, warnings))
