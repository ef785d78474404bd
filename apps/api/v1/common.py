"""Shared pieces of the v1 API: strict serializers, cursor pagination, the agent of a request."""

import base64
import re
from datetime import UTC, datetime
from urllib.parse import parse_qs

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError, models
from django.http import QueryDict
from django.urls import reverse
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, serializers
from rest_framework.pagination import CursorPagination
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from apps.core.database import DELETED_MEANWHILE
from apps.core.text import JSON_MAX_DEPTH, json_nodes, json_path, text_problem
from apps.knowledge.selectors import document_exists
from apps.tenancy.auth import AgentPrincipal
from apps.threads.selectors import run_exists, thread_exists


# The API's view: one whose GET refuses query parameters it does not take, naming them. A view
# lists what its GET reads in query_parameters (PAGE_PARAMETERS for a cursor page); the same list
# documents them in the schema (apps/api/schema.py), so what is documented is what is taken.
# DRF's `format` (which picks the renderer) is taken everywhere. A misspelt filter (?chanel=web)
# was silently ignored, answering the whole list as if it were filtered. (Said here rather than
# in a docstring: the schema would show a docstring as the description of every operation
# whose view has none of its own.)
class ApiView(APIView):
    # What a GET takes; the other methods take their input from the body alone, and a query
    # parameter sent to them (POST /search?top_k=5) would be ignored: refused instead.
    query_parameters: list[OpenApiParameter] = []
    # The methods whose operations take no body: one sent to them ({"version": 99} to a
    # DELETE, expecting a check) would be ignored, so it is refused.
    bodyless_methods: frozenset[str] = frozenset({"DELETE"})

    def handle_exception(self, exc):
        # A write whose thread, run or document was deleted while it ran fails on the row it
        # refers to: a foreign key at the commit, a row its service reads again, or a save that
        # updated no row. That is the object gone, a 404 as for any object not there, not a
        # server failure.
        if isinstance(exc, DatabaseError | ObjectDoesNotExist):
            gone = _gone(self.kwargs)
            if gone:
                exc = exceptions.NotFound(f"No such {gone}: {DELETED_MEANWHILE}")
        return super().handle_exception(exc)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # the key and its rights come first
        if request.method in ("GET", "HEAD"):
            _refuse_unknown_query_parameters(request, [p.name for p in self.query_parameters])
            _refuse_repeated_query_parameters(request)
            if _has_body(request):  # it would be ignored: GET /threads/{id}/context {"query"…}
                raise exceptions.ValidationError(
                    {
                        "body": [
                            "A GET takes no body: send its input as query parameters, or "
                            "with the operation's POST where it has one."
                        ]
                    }
                )
        elif request.method != "OPTIONS":
            takes_body = request.method not in self.bodyless_methods
            _refuse_unknown_query_parameters(request, [], takes_body=takes_body)
            _refuse_repeated_query_parameters(request)  # ?format=json&format=json
            if request.method in self.bodyless_methods and _has_body(request):
                raise exceptions.ValidationError(
                    {"body": ["This operation takes no body: send the request without one."]}
                )


def _has_body(request) -> bool:
    length = request.META.get("CONTENT_LENGTH") or "0"
    return (length.isdigit() and int(length) > 0) or "HTTP_TRANSFER_ENCODING" in request.META


def _gone(kwargs: dict) -> str:
    """Name the object of the request's path that no longer exists ("" when all are there)."""
    if "thread_id" in kwargs and not thread_exists(thread_id=kwargs["thread_id"]):
        return "thread"
    if "run_id" in kwargs and not run_exists(run_id=kwargs["run_id"]):
        return "run"
    if "document_id" in kwargs and not document_exists(document_id=kwargs["document_id"]):
        return "document"
    return ""


def _refuse_repeated_query_parameters(request) -> None:
    """Every query parameter takes one value, and reading one keeps the last: ?limit=1&limit=2
    answered pages of 2 without a word. Refused, as a form's repeated field is."""
    repeated = {
        name: [f"Sent {len(values)} times; send it once."]
        for name, values in request.query_params.lists()
        if len(values) > 1
    }
    if repeated:
        raise exceptions.ValidationError(repeated)


def _refuse_unknown_query_parameters(request, taken: list[str], takes_body=False) -> None:
    unknown = sorted(set(request.query_params) - {*taken, api_settings.URL_FORMAT_OVERRIDE})
    if unknown:
        if taken:
            known = f"This operation takes: {', '.join(taken)}."
        elif takes_body:
            known = "This operation takes none: send its input in the body."
        else:
            known = "This operation takes none."  # nor a body (refused as well)
        raise exceptions.ValidationError(
            {name: [f"Unknown query parameter. {known}"] for name in unknown}
        )


class QueryValues(dict):
    """Query parameters for a view's serializer: every value is text, converted by its field."""


def query_values(request) -> QueryValues:
    """The query parameters as a dict for a view's serializer, without DRF's `format`."""
    values = QueryValues(request.query_params.dict())
    values.pop(api_settings.URL_FORMAT_OVERRIDE, None)
    return values


class StrictSerializer(serializers.Serializer):
    """A serializer that rejects fields it does not know instead of silently dropping them, and
    in a JSON body a value of another JSON type than its field's instead of converting it."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                allowed = ", ".join(self.fields)
                raise exceptions.ValidationError(
                    {name: [f"Unknown field. Allowed fields: {allowed}."] for name in unknown}
                )
            if isinstance(data, QueryValues):  # a query string's numbers: digits only
                wrong = {
                    name: ["A valid integer is required."]
                    for name, value in data.items()
                    if isinstance(self.fields[name], serializers.IntegerField)
                    and whole_number(value.removeprefix("-")) is None
                }
                if wrong:
                    raise exceptions.ValidationError(wrong)
            if not isinstance(data, (QueryDict, QueryValues)):  # form fields, query strings: text
                wrong = {
                    name: errors
                    for name, value in data.items()
                    if (errors := json_type_errors(self.fields[name], value))
                }
                if wrong:
                    raise exceptions.ValidationError(wrong)
        return super().to_internal_value(data)


# The JSON types each kind of field takes. DRF converts the others: 123 became the text "123",
# "5" and 5.0 the number 5, "yes" and 1 the boolean true: a client's mistake stored as if meant.
_JSON_TYPES: tuple[tuple[type, tuple[type, ...], str], ...] = (
    (serializers.BooleanField, (bool,), "true or false"),
    (serializers.IntegerField, (int,), "an integer"),
    (serializers.FloatField, (int, float), "a number"),
    (serializers.CharField, (str,), "a string"),
    (serializers.ChoiceField, (str,), "a string"),
    (serializers.UUIDField, (str,), "a string"),
    (serializers.DateTimeField, (str,), "a string"),
)


def json_type_errors(field, value) -> list | dict | None:
    """Return DRF's errors for value's JSON type if it is not field's ([message], or
    {index: [message]} for a list's items), else None (null is the field's own business:
    allow_null)."""
    if value is None:
        return None
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        wrong = {
            index: errors
            for index, item in enumerate(value)
            if (errors := json_type_errors(field.child, item))
        }
        return wrong or None
    for kind, types, wanted in _JSON_TYPES:
        if isinstance(field, kind):
            bad = not isinstance(value, types) or (bool not in types and isinstance(value, bool))
            return [f"Expected {wanted}, got {_json_type(value)}."] if bad else None
    return None


def _json_type(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


class StrictSerializerSchema(OpenApiSerializerExtension):
    """Say in the schema what StrictSerializer enforces: a request body has no other field.

    Without `additionalProperties: false` the schema allowed any extra field that the API then
    refused with a 400; clients generating bodies from the schema (schemathesis among them)
    sent mostly bodies that could never pass.
    """

    target_class = StrictSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_basic_serializer(self.target, direction)
        if direction == "request":
            schema["additionalProperties"] = False
        return schema


# PostgreSQL's integer column; a larger value would fail in the database as a 500.
INTEGER_MAX = 2_147_483_647


def json_problem(value) -> str | None:
    """Say what in a JSON value the database cannot store, or return None if it can.

    PostgreSQL's jsonb refuses NUL and lone surrogates in keys and strings; SQLite would store
    them, so checking here keeps both backends alike.
    """
    for path, node, depth in json_nodes(value):
        if isinstance(node, dict | list) and depth == JSON_MAX_DEPTH:
            return f"It nests more than {JSON_MAX_DEPTH} levels deep; flatten it"
        if isinstance(node, dict):
            for key in node:
                problem = text_problem(str(key))
                if problem:
                    # repr() escapes the character, so the error itself stays encodable.
                    where = json_path(path) or "the top"
                    return f"The key {str(key)!r} at {where} {problem}"
        elif isinstance(node, str):
            problem = text_problem(node)
            if problem:
                return f"The text at {json_path(path) or 'the top'} {problem}"
    return None


def _check_storable(value) -> None:
    problem = json_problem(value)
    if problem:
        raise serializers.ValidationError(f"{problem}.")


class StorableJsonField(serializers.JSONField):
    """Any JSON value that PostgreSQL's jsonb can store."""

    def to_internal_value(self, data):
        _check_storable(data)  # first: JSONField's own check re-encodes the value
        return super().to_internal_value(data)


class JsonObjectField(serializers.DictField):
    """A JSON object that PostgreSQL's jsonb can store."""

    def __init__(self, **kwargs):
        super().__init__(child=serializers.JSONField(), **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, dict):
            _check_storable(data)  # first: each child JSONField re-encodes its value
        return super().to_internal_value(data)


class MetadataField(JsonObjectField):
    """A JSON object of free-form metadata; {} when left out."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", dict)
        super().__init__(**kwargs)


def iso_datetime(value) -> str:
    """Return a datetime as DRF's DateTimeField renders it (ISO 8601, UTC as "Z")."""
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def principal(request) -> AgentPrincipal:
    return request.user


def actor_name(request) -> str:
    """How the audit log names the caller: agent:<project>/<agent>."""
    agent = principal(request).agent
    return f"agent:{agent.project.slug}/{agent.slug}"


def total_order(ordering: str, model) -> tuple[str, str]:
    """Return the order a list promises as a total order of model's rows.

    "-id" / "id" promise creation order, newest / oldest first. A UUIDv7 id orders rows only
    by their millisecond (the rest is random), so rows made within one millisecond came back
    in any order: such lists order by creation time (to the microsecond), the id breaking its
    ties. An integer id is the creation order itself. Any other field gets the id as tie-break.
    """
    descending = ordering.startswith("-")
    sign = "-" if descending else ""
    if ordering.lstrip("-") == "id":
        if isinstance(model._meta.pk, models.UUIDField):
            return (f"{sign}created_at", f"{sign}id")
        return (ordering,)
    return (ordering, f"{sign}id")


def _canonical_url(request) -> str:
    """The request's absolute URL with its path written as the server writes it: an id sent in
    upper case or without dashes (the converter takes either) is lower case with dashes in the
    page links, as in every answer."""
    match = request.resolver_match
    if match is None or not match.view_name:
        return request.build_absolute_uri()
    path = reverse(match.view_name, args=match.args, kwargs=match.kwargs)
    query = request.META.get("QUERY_STRING", "")
    return request.build_absolute_uri(f"{path}?{query}" if query else path)


class IdCursorPagination(CursorPagination):
    """Cursor pages in creation order, newest first (see total_order)."""

    ordering = "-id"
    page_size_query_param = "limit"

    def __init__(self):
        self.page_size = settings.API_PAGE_SIZE
        self.max_page_size = settings.API_MAX_PAGE_SIZE

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        return parse_limit(raw, maximum=self.max_page_size)

    def paginate_queryset(self, queryset, request, view=None):
        self.model = queryset.model
        if isinstance(self.ordering, str):
            self.ordering = total_order(self.ordering, self.model)
        try:
            page = super().paginate_queryset(queryset, request, view)
        except exceptions.NotFound:
            raise exceptions.ValidationError(
                {"cursor": ["Invalid cursor: pass the 'next' or 'previous' link of a page."]}
            ) from None
        self.base_url = _canonical_url(request)
        return page

    def decode_cursor(self, request):
        """Decode the cursor, refusing one this server cannot have issued.

        DRF checks the cursor's syntax only loosely: its base64 decoding skips any character
        outside the alphabet and its query string ignores unknown parts, so a garbled cursor
        (cursor=!!!) read as the first page. And its position goes straight into the query,
        where a value of the wrong type fails in the database as a 500.
        """
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded and not _cursor_well_formed(encoded):
            raise exceptions.NotFound(self.invalid_cursor_message)
        cursor = super().decode_cursor(request)
        if cursor is None:
            return None
        # An offset counts rows of one page that share the last position, so no issued cursor
        # has one beyond the largest page (DRF would silently cap it instead).
        if cursor.offset > self.max_page_size:
            raise exceptions.NotFound(self.invalid_cursor_message)
        if cursor.position is not None:
            field = self.model._meta.get_field(self.ordering[0].lstrip("-"))
            try:
                position = field.to_python(cursor.position)
                field.run_validators(position)
                if isinstance(position, datetime):
                    # Issued positions are aware; one at the calendar's edge cannot be
                    # compared in UTC (an OverflowError in the query, a 500).
                    if position.tzinfo is None:
                        raise DjangoValidationError("a position without its time zone")
                    position.astimezone(UTC)
            except (DjangoValidationError, OverflowError):
                raise exceptions.NotFound(self.invalid_cursor_message) from None
        return cursor


# What DRF writes into a cursor: o (offset), r (reverse, as 1) and p (position), each once.
_CURSOR_PARTS = {"o", "r", "p"}


def _cursor_well_formed(encoded: str) -> bool:
    """Say whether the cursor is strict base64 of the ASCII query string DRF writes.

    An empty one passes: it is what DRF writes for the first position (no part to write).
    """
    try:
        text = base64.b64decode(encoded.encode("ascii"), validate=True).decode("ascii")
        parts = parse_qs(text, keep_blank_values=True, strict_parsing=True)
    except ValueError:  # binascii.Error and UnicodeError are ValueErrors
        return False
    return (
        set(parts) <= _CURSOR_PARTS
        and all(len(values) == 1 for values in parts.values())
        and parts.get("r", ["1"]) == ["1"]
    )


def whole_number(raw: str) -> int | None:
    """Read a query parameter's whole number: ASCII digits only, or None. Python's int() also
    takes "1_0", "+2", " 2 " and other scripts' digits ("３"), which no client means."""
    return int(raw) if _DIGITS.fullmatch(raw) else None


_DIGITS = re.compile(r"[0-9]+")


def parse_limit(raw: str, *, maximum: int) -> int:
    limit = whole_number(raw) or 0
    if not 1 <= limit <= maximum:
        raise exceptions.ValidationError(
            {"limit": [f"Must be a whole number from 1 to {maximum}."]}
        )
    return limit


# The query parameters of every cursor-paginated list, for its schema (paginate() reads them).
PAGE_PARAMETERS = [
    OpenApiParameter(
        "limit",
        int,
        description=f"Page size: 1 to {settings.API_MAX_PAGE_SIZE} "
        f"(default {settings.API_PAGE_SIZE}).",
    ),
    OpenApiParameter("cursor", str, description="From a page's next/previous link."),
]

_paginated_classes: dict[type, type] = {}


def paginated(serializer_class: type) -> type:
    """Return the schema serializer of a cursor page of serializer_class items."""
    if serializer_class not in _paginated_classes:
        name = serializer_class.__name__.removesuffix("Serializer")
        _paginated_classes[serializer_class] = type(
            f"Paginated{name}List",
            (serializers.Serializer,),
            {
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "results": serializer_class(many=True),
            },
        )
    return _paginated_classes[serializer_class]


def paginate(request, view, queryset, serializer_class, *, ordering: str = "-id"):
    """Answer one cursor page; ordering "-id" / "id" is creation order, newest / oldest first."""
    paginator = IdCursorPagination()
    paginator.ordering = ordering
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)
