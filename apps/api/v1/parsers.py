"""API parsers: multipart that refuses file names with folders, JSON that refuses absurd depth."""

from django.conf import settings
from django.http.multipartparser import MultiPartParser as DjangoMultiPartParser
from django.http.multipartparser import MultiPartParserError
from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, JSONParser, MultiPartParser


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


class DepthSafeJSONParser(JSONParser):
    """A JSON parser that answers a body nested past Python's recursion limit with a 400."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            # json.loads recurses once per level; thousands of levels would otherwise be a 500.
            raise ParseError(
                "JSON parse error - the body nests too deeply; flatten it to at most 100 levels."
            ) from None
