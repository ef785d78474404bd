"""Path converters of the API."""

import uuid

from django.urls.converters import PathConverter


class AnyCaseUUIDConverter:
    """A UUID in a path as uuid.UUID reads it: in either case, with or without its dashes.

    Django's `uuid` converter takes lower case with dashes only, so an id written back by a
    client that parses and prints UUIDs (Swift's uuidString is upper case) was "No such URL",
    while the same id in a body or a query parameter was found. URLs built here (reverse, the
    `next` links) stay lower case with dashes.
    """

    regex = "[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"

    def to_python(self, value: str) -> uuid.UUID:
        return uuid.UUID(value)

    def to_url(self, value) -> str:
        return str(value)


class EndUserIdConverter(PathConverter):
    """An end user's id in a path: any text, slashes and line breaks included.

    Django's `path` converter is `.+`, which stops at a line break: `/resources/ann%0A/profile`
    was "No such URL" where a body's "ann\\n" names ann. The views trim and check the id as
    they do a body's.
    """

    regex = "(?s:.+)"
