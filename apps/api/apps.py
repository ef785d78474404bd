import sys

from django.apps import AppConfig

# json.loads recurses once per nesting level, on top of the frames of the middleware and views
# that run before a body is parsed (a hundred and more). With the default limit of 1,000, a body
# nested a few hundred levels deep failed in the parser, whose message cannot say which field
# nests too deep; with this headroom it parses, and the field check names the field.
RECURSION_LIMIT = 2_000


class ApiConfig(AppConfig):
    name = "apps.api"
    label = "api"
    verbose_name = "REST API"

    def ready(self):
        sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
