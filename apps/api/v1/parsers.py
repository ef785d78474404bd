"""API parsers: multipart that refuses file names with folders, JSON that refuses absurd depth,
a key repeated in one object and text that is not Unicode."""

import codecs
import json
import math
import sys

import orjson
from django.conf import settings
from django.http.multipartparser import MultiPartParser as DjangoMultiPartParser
from django.http.multipartparser import MultiPartParserError
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import BaseParser, DataAndFiles, JSONParser, MultiPartParser

from apps.core.text import (
    LONE_SURROGATE,
    LONE_SURROGATE_PROBLEM,
    RepeatedKey,
    json_nodes,
    name_problem,
    non_finite_number,
    object_once,
)


class _PlainNameParser(DjangoMultiPartParser):
    def sanitize_file_name(self, file_name):
        if "/" in file_name or "\\" in file_name or file_name in {".", ".."}:
            raise MultiPartParserError(
                f"file name {file_name!r} has folders in it; send a plain file name"
            )
        # Django drops a name's unprintable characters without a word ("a\x00.txt" became
        # "a.txt"); a name holding one is refused instead, as a JSON name is.
        if problem := name_problem(file_name):
            raise MultiPartParserError(f"file name {file_name!r} {problem}")
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
        _refuse_repeated_fields(data, files)
        _refuse_undecodable_text(data)
        return DataAndFiles(data, files)


def _refuse_undecodable_text(data) -> None:
    """Refuse a text field that was not UTF-8: Django decodes it replacing each bad byte with
    U+FFFD, so a title sent as bytes FF FE was stored as "��" without a word. The replacement
    character is taken as that mark (sent as itself, it is the trace of an earlier failed
    decoding just the same). A file whose name is not UTF-8 Django leaves out: "No file was
    submitted", naming the field."""
    for name, values in data.lists():
        if any(isinstance(value, str) and "\ufffd" in value for value in values):
            raise ValidationError({name: ["Not valid UTF-8: send the text encoded as UTF-8."]})


def _refuse_repeated_fields(data, files) -> None:
    """Refuse a field sent more than once: every field of the API's forms takes one value,
    and the form's reading keeps only the last (two `file` parts stored the second alone)."""
    for name in dict.fromkeys([*data, *files]):
        sent_files = len(files.getlist(name))
        count = len(data.getlist(name)) + sent_files
        if count > 1:
            message = (
                f"{sent_files} files in one request; send one file per request."
                if sent_files > 1
                else f"Sent {count} times; send it once."
            )
            raise ValidationError({name: [message]})


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
        encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
        constants: list[str] = []  # NaN, Infinity, -Infinity, as they were read
        overflows: list[str] = []  # numbers beyond a double (1e400), which read as infinities
        underflows: list[str] = []  # numbers too small for one (1e-400), which read as 0

        def constant(word: str) -> float:
            constants.append(word)
            return float(word)

        def number(text: str) -> float:
            value = float(text)
            if math.isinf(value):
                overflows.append(text)
            elif value == 0 and any(digit in "123456789" for digit in text.lower().split("e")[0]):
                underflows.append(text)  # 1e-400 read as 0.0, stored so without a word
            return value

        try:
            data = json.load(
                codecs.getreader(encoding)(stream),
                parse_constant=constant,
                parse_float=number,
                object_pairs_hook=object_once,
            )
        except RepeatedKey as repeated:
            raise ParseError(f"JSON parse error - {repeated}") from None
        except ValueError as exc:
            # Python's own digit limit, whose message advised raising it on the server.
            if "integer string conversion" in str(exc):
                raise ParseError(
                    f"JSON parse error - an integer has more than {sys.get_int_max_str_digits()} "
                    "digits; send it as a string."
                ) from None
            raise ParseError(f"JSON parse error - {exc}") from None
        except RecursionError:
            # json.loads recurses once per level; thousands of levels would otherwise be a 500.
            raise ParseError(
                "JSON parse error - the body nests too deeply; flatten it to at most 100 levels."
            ) from None
        if constants or overflows:
            _refuse_non_finite(data, overflows)
        if underflows:
            raise ParseError(
                f"JSON parse error - {underflows[0]} is too small a number to keep (it reads as "
                "0); send 0, or a number within the range of a double (±2.2e-308 and up)."
            )
        if data is None:
            # DRF reads a null body as no body, so an operation whose fields all have defaults
            # (starting a run, say) went ahead as if {} had been sent.
            raise ParseError("JSON parse error - the body is null; send a JSON object.")
        try:
            # orjson encodes text as UTF-8, so it fails on a lone surrogate; 1.5 ms for a 2 MB
            # body of messages, where walking the body in Python took 40 ms.
            orjson.dumps(data)
        except orjson.JSONEncodeError:
            _refuse_lone_surrogates(data)  # or it failed on what it cannot take (2**64 and up)
        return data


def _refuse_lone_surrogates(data) -> None:
    """Refuse a body whose text holds a lone UTF-16 surrogate, naming where it is.

    JSON may escape one (\\udcff) and json.loads lets it through, but such text is no Unicode:
    it cannot be encoded as UTF-8, so no database stores it, and a field that echoes its value
    in an error ("is not a valid choice") made the answer itself fail to render, a 500. Refused
    here for every field alike, as e.g. messages[0].role: The text contains a lone ...
    """
    for path, node, _ in json_nodes(data):
        if isinstance(node, str):
            if LONE_SURROGATE.search(node):
                _refuse(path, f"The text {LONE_SURROGATE_PROBLEM}.")
        elif isinstance(node, dict):
            for key in node:
                if LONE_SURROGATE.search(key):
                    # repr() escapes the surrogate, so that the error itself can be rendered.
                    _refuse(path, f"The key {key!r} {LONE_SURROGATE_PROBLEM}.")


def _refuse_non_finite(data, overflows: list[str]) -> None:
    """Refuse a NaN or infinity, naming where it is (messages[0].payload.score: NaN is ...).

    DRF's parser refused them with the parse error alone; the words are read as floats first
    (a parse_constant that raises cannot know its key) and found again only when there was one.
    A number too large for a double (1e400) reads as an infinity and is refused as too large
    (it was "Value must be valid JSON." or "A valid number is required.", naming no number).
    """
    path, spelt = non_finite_number(data)
    if spelt != "NaN" and overflows:
        message = f"{overflows[0]} is too large a number; send one within ±1.7e308."
    else:
        message = f"{spelt} is not a JSON number; send a finite number."
    if not path:
        raise ParseError(f"JSON parse error - {message}")
    _refuse(path, message)


def _refuse(path: tuple, message: str):
    """Raise the error at path, nested as DRF nests a field's ({"messages": {0: {"role": ...}}})."""
    detail: dict | list = [message]
    for part in reversed(path):
        detail = {part: detail}
    raise ValidationError(detail)
