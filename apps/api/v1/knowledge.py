"""Knowledge bases and their documents: create, upload (file or text), watch, re-index, delete."""

from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response

from apps.api.v1.common import (
    PAGE_PARAMETERS,
    ApiView,
    StrictSerializer,
    actor_name,
    paginate,
    paginated,
    principal,
)
from apps.api.v1.parsers import DepthSafeJSONParser, PlainNameMultiPartParser
from apps.core.errors import PayloadTooLarge
from apps.knowledge import selectors, services
from apps.knowledge.models import DocumentStatus


class KnowledgeBaseSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    slug = serializers.SlugField()
    name = serializers.CharField()
    description = serializers.CharField()
    created_at = serializers.DateTimeField()


class DocumentSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    knowledge_base = serializers.SlugField(source="knowledge_base.slug")
    title = serializers.CharField()
    status = serializers.ChoiceField(choices=DocumentStatus.choices)
    progress = serializers.IntegerField(help_text="Percent of ingestion done.")
    error = serializers.CharField(help_text="Why the document failed, when it did.")
    attempts = serializers.IntegerField()
    mime_type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    content_hash = serializers.CharField()
    chunk_count = serializers.IntegerField()
    token_count = serializers.IntegerField()
    metadata = serializers.DictField()
    uploaded_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class DocumentUploadedSerializer(DocumentSerializer):
    duplicate = serializers.BooleanField(
        help_text="True when this content was already in the knowledge base; no copy was stored."
    )


class ChunkSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    chunk_index = serializers.IntegerField()
    content = serializers.CharField()
    token_count = serializers.IntegerField()
    metadata = serializers.DictField(help_text="page and heading, where known.")


class KnowledgeBaseListApi(ApiView):
    class KnowledgeBaseCreateSerializer(StrictSerializer):
        slug = serializers.SlugField(max_length=64)
        name = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
        description = serializers.CharField(required=False, default="", allow_blank=True)

    query_parameters = PAGE_PARAMETERS

    @extend_schema(
        operation_id="knowledge_bases_list",
        responses=paginated(KnowledgeBaseSerializer),
    )
    def get(self, request):
        kbs = selectors.knowledge_base_list(project=principal(request).project)
        return paginate(request, self, kbs, KnowledgeBaseSerializer)

    @extend_schema(
        operation_id="knowledge_bases_create",
        request=KnowledgeBaseCreateSerializer,
        responses={201: KnowledgeBaseSerializer},
    )
    def post(self, request):
        data = self.KnowledgeBaseCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        kb = services.knowledge_base_create(
            project=principal(request).project, actor=actor_name(request), **data.validated_data
        )
        return Response(KnowledgeBaseSerializer(kb).data, status=status.HTTP_201_CREATED)


class DocumentListApi(ApiView):
    parser_classes = [PlainNameMultiPartParser, DepthSafeJSONParser]

    class DocumentTextSerializer(StrictSerializer):
        title = serializers.CharField(max_length=300)
        text = serializers.CharField(trim_whitespace=False)

    class DocumentUrlSerializer(StrictSerializer):
        url = serializers.CharField(
            max_length=2000, help_text="An http or https address of a public web page."
        )
        title = serializers.CharField(max_length=300, required=False, default="")

    class DocumentFileSerializer(StrictSerializer):
        file = serializers.FileField(allow_empty_file=True)
        title = serializers.CharField(max_length=300, required=False, default="")

    query_parameters = [
        OpenApiParameter("status", str, enum=DocumentStatus.values),
        *PAGE_PARAMETERS,
    ]

    @extend_schema(
        operation_id="documents_list",
        responses=paginated(DocumentSerializer),
    )
    def get(self, request, kb_slug):
        kb = selectors.knowledge_base_get(project=principal(request).project, slug=kb_slug)
        state = request.query_params.get("status")
        if state is not None and state not in DocumentStatus.values:
            raise exceptions.ValidationError(
                {"status": [f"Must be one of {', '.join(DocumentStatus.values)}."]}
            )
        return paginate(
            request, self, selectors.document_list(kb=kb, status=state), DocumentSerializer
        )

    @extend_schema(
        operation_id="documents_upload",
        request={
            "multipart/form-data": DocumentFileSerializer,
            "application/json": PolymorphicProxySerializer(
                component_name="DocumentJsonInput",
                serializers=[DocumentTextSerializer, DocumentUrlSerializer],
                resource_type_field_name=None,
            ),
        },
        responses={202: DocumentUploadedSerializer, 200: DocumentUploadedSerializer},
        description="Upload a file (multipart `file`: PDF, Markdown, HTML or text) or JSON "
        "`{title, text}`, or JSON `{url, title?}` for a web page, fetched by the worker (http or "
        "https; private, loopback and link-local addresses are refused unless the server "
        "allows them; the page's main text is kept and the URL is its source). "
        "Ingestion runs in the background: poll the document until it is "
        "`ready` or `failed`. Content already in the knowledge base answers 200 with the "
        "existing document and `duplicate: true`.",
    )
    def post(self, request, kb_slug):
        kb = selectors.knowledge_base_get(project=principal(request).project, slug=kb_slug)
        actor = actor_name(request)  # as the audit log names it: agent:<project>/<agent>
        if request.content_type.startswith("multipart/"):
            data = self.DocumentFileSerializer(data=request.data)
            if getattr(request._request, "upload_too_large", False):
                raise PayloadTooLarge("file: the upload is over the size limit; split the file.")
            data.is_valid(raise_exception=True)
            result = services.document_upload(
                kb=kb,
                upload=data.validated_data["file"],
                title=data.validated_data["title"],
                actor=actor,
            )
        elif isinstance(request.data, dict) and "url" in request.data:
            data = self.DocumentUrlSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            result = services.document_from_url(kb=kb, actor=actor, **data.validated_data)
        else:
            data = self.DocumentTextSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            result = services.document_from_text(kb=kb, actor=actor, **data.validated_data)
        body = DocumentSerializer(result.document).data
        body["duplicate"] = not result.created
        return Response(
            body, status=status.HTTP_202_ACCEPTED if result.created else status.HTTP_200_OK
        )


class DocumentDetailApi(ApiView):
    @extend_schema(operation_id="documents_read", responses=DocumentSerializer)
    def get(self, request, document_id):
        document = selectors.document_get(
            project=principal(request).project, document_id=document_id
        )
        return Response(DocumentSerializer(document).data)

    @extend_schema(operation_id="documents_delete", responses={204: None})
    def delete(self, request, document_id):
        document = selectors.document_get(
            project=principal(request).project, document_id=document_id
        )
        services.document_delete(document=document, actor=actor_name(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentReindexApi(ApiView):
    bodyless_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="documents_reindex",
        request=None,
        responses={202: DocumentSerializer},
        description="Extract and chunk the document again; its chunks leave search until done.",
    )
    def post(self, request, document_id):
        document = selectors.document_get(
            project=principal(request).project, document_id=document_id
        )
        document = services.document_reindex(document=document, actor=actor_name(request))
        return Response(DocumentSerializer(document).data, status=status.HTTP_202_ACCEPTED)


class DocumentChunksApi(ApiView):
    query_parameters = PAGE_PARAMETERS

    @extend_schema(
        operation_id="documents_chunks",
        responses=paginated(ChunkSerializer),
    )
    def get(self, request, document_id):
        document = selectors.document_get(
            project=principal(request).project, document_id=document_id
        )
        chunks = selectors.chunk_list(document=document)
        return paginate(request, self, chunks, ChunkSerializer, ordering="id")
