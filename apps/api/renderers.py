"""The API's JSON renderer (DRF's JSONRenderer with orjson doing the encoding), and the
negotiation that names a format it does not answer in."""

import orjson
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

# Datetimes as DRF's encoder writes them (ISO 8601, "Z" for UTC); keys that are not strings
# (an int-keyed dict in a payload) as text, as json.dumps does.
_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS
# DRF escapes these two so that its JSON is also valid JavaScript; orjson leaves them raw.
_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


class OrjsonRenderer(JSONRenderer):
    """Render with orjson: the same JSON as DRF's JSONRenderer writes (compact, UTF-8).

    Kept for its speed: a context answer of a long thread (~300 KB: the observations' text in
    its block and again in system_prompt) took 4.2 ms in json.dumps with DRF's encoder and 0.1
    ms in orjson, of a ~60 ms request (bench/context.py's data, in-process). What orjson cannot
    encode itself (Decimal, lazy translations, numpy values) goes through DRF's encoder; a
    pretty-printed answer (Accept: application/json; indent=N) is DRF's own, and so is one that
    orjson refuses (an integer beyond 64 bits, which a message's payload may hold). Text with a
    lone UTF-16 surrogate, which neither can encode as UTF-8, is written with JSON's \\u escapes.
    """

    _default = staticmethod(JSONEncoder().default)

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if self.get_indent(accepted_media_type, renderer_context or {}) is not None:
            return self._drf_render(data, accepted_media_type, renderer_context)
        try:
            out = orjson.dumps(data, default=self._default, option=_OPTIONS)
        except orjson.JSONEncodeError:
            return self._drf_render(data, accepted_media_type, renderer_context)
        for raw, escaped in _SEPARATORS:
            if raw in out:
                out = out.replace(raw, escaped)
        return out

    def _drf_render(self, data, accepted_media_type, renderer_context):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            # A lone surrogate (stored before text was checked, or echoed in an error) has no
            # UTF-8; escaped, the answer is still JSON and reads back as what was stored.
            escaping = JSONRenderer()
            escaping.ensure_ascii = True
            return escaping.render(data, accepted_media_type, renderer_context)


class NamedFormatNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, but a ?format= the API does not answer in is a 400 naming format:
    DRF answered 404 "Not found.", as if the URL were wrong."""

    def filter_renderers(self, renderers, format):
        kept = [renderer for renderer in renderers if renderer.format == format]
        if not kept:
            offered = ", ".join(sorted({renderer.format for renderer in renderers}))
            raise ValidationError(
                {"format": [f"{format!r} is not a format this API answers in; send {offered}."]}
            )
        return kept
