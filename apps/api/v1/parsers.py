"""API parsers: multipart that refuses file names with folders, JSON that refuses absurd depth."""

from django.conf import settings
from django.http.multipartparser import MultiPartParser as DjangoMultiPartParser
from django.http.multipartparser import MultiPartParserError
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser, DataAndFiles, JSONParser, MultiPartParser


class _PlainNameParser(DjangoMultiPartParser):
    def sanitize_file_name(self, file_name):
        if "/" in file_name or "\\" in file_name or file_name in {".", ".."}:
            raise MultiPartParserError(
                f"file name {file_name!r} has folders in it; send a plain file name"
            )
        return super().sanitize_file_name(file_name)


class PlainNameMultiPartParser(MultiPartParser):
    def parse(self, stream, media_type=None, parser_context=None):
        request = parser_context["request"]
        meta = request.META.copy()
        meta["CONTENT_TYPE"] = media_type
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            parser = _PlainNameParser(meta, stream, request.upload_handlers, encoding)
            data, files = parser.parse()
        except MultiPartParserError as exc:
            raise ParseError(f"Multipart form parse error - {exc}") from None
        return DataAndFiles(data, files)


class DepthSafeJSONParser(BaseParser):
    """A JSON parser that answers a body nested past Python's recursion limit with a 400.

    It parses as DRF's JSONParser does, but is deliberately not one: for a JSONParser DRF reads
    the body through request.body, which Django caps at DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB),
    so JSON bodies were refused far below their documented limits. Given the request stream
    instead, Django reads exactly Content-Length bytes, which ApiBodyLimitMiddleware has already
    held to the limit of that kind of body (API_MAX_BODY_BYTES, or KNOWLEDGE_MAX_UPLOAD_BYTES
    for a document) before any of it is read.
    """

    media_type = JSONParser.media_type
    renderer_class = JSONParser.renderer_class

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return JSONParser().parse(stream, media_type, parser_context)
        except RecursionError:
            # json.loads recurses once per level; thousands of levels would otherwise be a 500.
            raise ParseError(
                "JSON parse error - the body nests too deeply; flatten it to at most 100 levels."
            ) from None
