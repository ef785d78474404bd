"""Artifacts of runs: upload (a file or JSON text), list a thread's, download, delete."""

import mimetypes
import uuid

from django.http import HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
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
from apps.runstate import selectors as runstate_selectors
from apps.runstate import services as runstate_services
from apps.threads import selectors as thread_selectors


class ArtifactSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    thread_id = serializers.UUIDField()
    run_id = serializers.UUIDField()
    name = serializers.CharField()
    kind = serializers.CharField()
    content_type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    sha256 = serializers.CharField(help_text="SHA-256 of the bytes, hex.")
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()


KIND_HELP = "What it is, e.g. spec, report, code (lowercase; default file)."


class ArtifactUploadApi(ApiView):
    parser_classes = [PlainNameMultiPartParser, DepthSafeJSONParser]

    class ArtifactFileSerializer(StrictSerializer):
        file = serializers.FileField(allow_empty_file=True)
        name = serializers.CharField(max_length=255, required=False, default="")
        kind = serializers.CharField(
            max_length=64, required=False, default="file", help_text=KIND_HELP
        )

    class ArtifactTextSerializer(StrictSerializer):
        name = serializers.CharField(max_length=255)
        kind = serializers.CharField(
            max_length=64, required=False, default="file", help_text=KIND_HELP
        )
        content = serializers.CharField(trim_whitespace=False, allow_blank=True)
        content_type = serializers.CharField(
            max_length=255,
            required=False,
            default="",
            help_text="Default: from the name's extension (text/plain for none).",
        )

    @extend_schema(
        operation_id="artifacts_upload",
        request={
            "multipart/form-data": ArtifactFileSerializer,
            "application/json": ArtifactTextSerializer,
        },
        responses={201: ArtifactSerializer},
        description="Keep a file the run produced: multipart `file` (its name and content type "
        "as sent; `name` overrides the name) or JSON `{name, kind, content, content_type?}` for "
        "text. Over ARTIFACT_MAX_BYTES answers 413.",
    )
    def post(self, request, run_id):
        run = thread_selectors.run_get(agent=principal(request).agent, run_id=run_id)
        if request.content_type.startswith("multipart/"):
            if getattr(request._request, "upload_too_large", False):
                raise PayloadTooLarge("file: the upload is over the size limit; split the file.")
            data = self.ArtifactFileSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            upload = data.validated_data["file"]
            artifact = runstate_services.artifact_create(
                run=run,
                name=data.validated_data["name"] or upload.name or "",
                kind=data.validated_data["kind"],
                content=upload.read(),
                content_type=_sent_type(upload),
                actor=actor_name(request),
                field="file",
            )
        else:
            data = self.ArtifactTextSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            fields = data.validated_data
            content_type = fields["content_type"] or _text_type(fields["name"])
            artifact = runstate_services.artifact_create(
                run=run,
                name=fields["name"],
                kind=fields["kind"],
                content=_encoded(fields["content"], content_type),
                content_type=content_type,
                actor=actor_name(request),
            )
        return Response(ArtifactSerializer(artifact).data, status=status.HTTP_201_CREATED)


def _encoded(content: str, content_type: str) -> bytes:
    """JSON content as the bytes of the charset its content_type names (UTF-8 if none): stored
    as UTF-8 under charset=latin-1, "café" was served as "cafÃ©"."""
    charset = runstate_services.content_charset(content_type) or "utf-8"
    try:
        return content.encode(charset)
    except UnicodeEncodeError as error:
        raise exceptions.ValidationError(
            {
                "content": [
                    f"{error.object[error.start]!r} cannot be written in {charset}, the charset "
                    "content_type names; name one that holds it (utf-8), or leave it out."
                ]
            }
        ) from None


def _text_type(name: str) -> str:
    """JSON content is text: its type from the name when that is text, else text/plain."""
    guessed = mimetypes.guess_type(name)[0] or ""
    return guessed if guessed.startswith("text/") else "text/plain"


class ArtifactListApi(ApiView):
    query_parameters = [
        OpenApiParameter("run_id", uuid.UUID, description="Only this run's artifacts."),
        *PAGE_PARAMETERS,
    ]

    @extend_schema(
        operation_id="artifacts_list",
        responses=paginated(ArtifactSerializer),
    )
    def get(self, request, thread_id):
        thread = thread_selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        run_id = request.query_params.get("run_id")
        if run_id is not None:
            try:
                run_id = uuid.UUID(run_id)
            except ValueError:
                raise exceptions.ValidationError(
                    {"run_id": ["Must be a run's id (a UUID)."]}
                ) from None
        artifacts = runstate_selectors.artifact_list(thread=thread, run_id=run_id)
        return paginate(request, self, artifacts, ArtifactSerializer)


class ArtifactDetailApi(ApiView):
    @extend_schema(
        operation_id="artifacts_download",
        responses={(200, "*/*"): OpenApiResponse(OpenApiTypes.BINARY)},
        description="The artifact's bytes, with its content type, as an attachment.",
    )
    def get(self, request, artifact_id):
        artifact = runstate_selectors.artifact_get(
            agent=principal(request).agent, artifact_id=artifact_id
        )
        response = HttpResponse(bytes(artifact.content), content_type=artifact.content_type)
        response["Content-Disposition"] = content_disposition_header(True, artifact.name)
        response["X-Content-SHA256"] = artifact.sha256
        return response

    @extend_schema(operation_id="artifacts_delete", responses={204: None})
    def delete(self, request, artifact_id):
        artifact = runstate_selectors.artifact_get(
            agent=principal(request).agent, artifact_id=artifact_id
        )
        runstate_services.artifact_delete(artifact=artifact, actor=actor_name(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _sent_type(upload) -> str:
    """The file part's content type as it was sent, its charset included: Django's parser keeps
    the charset apart (upload.charset), and without it a Latin-1 text file was stored, and
    served back, as UTF-8 (text without a charset is marked UTF-8)."""
    if not upload.content_type:
        return ""
    charset = upload.charset  # the multipart parser gives it as the header's bytes
    if isinstance(charset, bytes):
        charset = charset.decode("latin-1")
    return upload.content_type + (f"; charset={charset}" if charset else "")
