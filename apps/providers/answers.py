"""Read a model's answer and check it against its source, the same way for every memory path.

A model's answer is used only when it is what was asked for and keeps what its source holds:
  - json_answer: the JSON object of an answer, bare, inside a ``` fence, or with prose around
    it ("Here is the JSON: {…} Hope it helps"); a refusal ("I can't help with that") is told
    apart from an answer that is merely not JSON;
  - answer_problem: why an answer that parsed must still not be used: it is longer than its
    source (it did not condense; LENGTH_SLACK characters allowed), it drops an identifier of
    its source (ids, URLs, e-mail and IP addresses, versions, numbers of two digits or more,
    paths), or it drops an error the source reports (the failure or its identifiers). ""
    when there is none.
Callers record what these say as the failure's reason and keep their extractive result instead.
"""

import json
import re

from apps.providers.errors import LLMOutputError, LLMRefusal

_FENCED = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_EXCERPT_CHARS = 200
_JSON_TYPES = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
# How a refusal starts, in the languages of the usual providers' refusals (English first).
_REFUSAL = re.compile(
    r"^\W*(?:i'?m\s+sorry|i\s+am\s+sorry|sorry,?\s+(?:but\s+)?i|i\s+(?:can(?:'|no)t|cannot|"
    r"won'?t|am\s+(?:not\s+able|unable))|i'?m\s+(?:not\s+able|unable)|as\s+an\s+ai\b|"
    r"unfortunately,?\s+i\s+(?:can(?:'|no)t|cannot))",
    re.IGNORECASE,
)
_URL = r"https?://[^\s\"'<>)\]},]+"
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
# Dotted numbers (versions, addresses, decimals): 4.2, v2.1.3, 10.0.0.5, 489.00.
_DOTTED = r"\bv?\d+(?:\.\d+)+\b"
# Tokens mixing letters and digits, joined by - or _ or long: wf-123, call_9f2, a1b2c3d4.
_ID = (
    r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+\b"
    r"|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{6,}\b"
)
_PATH = r"(?<![\w/])/[\w.@~-]+(?:/[\w.@~-]+)+"
_NUMBER = r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w])|(?<![\w.])\d{2,}(?![\w.])"
IDENTIFIER = re.compile("|".join(f"(?:{p})" for p in (_URL, _EMAIL, _DOTTED, _ID, _PATH, _NUMBER)))
# A line or sentence of the source that reports an error.
_ERROR_LINE = re.compile(
    r"\b(?:error|exception|traceback|failed|failure|fatal|denied|refused|timed?\s?out|"
    r"unauthori[sz]ed|forbidden)\b|\"ok\":\s*false|\"status\":\s*[45]\d\d\b",
    re.IGNORECASE,
)
_ERROR_WORD = re.compile(
    r"\b(?:error|errors|exception|fail\w*|fatal|denied|refused|timed?\s?out|unauthori[sz]ed|"
    r"forbidden|crash\w*|broke\w*)\b|\b[45]\d\d\b",
    re.IGNORECASE,
)
_SHOWN = 10  # identifiers or error lines named in a reason
# Characters an answer may exceed its source by: a seq reference and a label on a one-line
# source ("[#10] Error (deploy): …"); on any source worth condensing it is noise.
LENGTH_SLACK = 40


def excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT_CHARS else flat[:_EXCERPT_CHARS] + "…"


def is_refusal(text: str) -> bool:
    """Whether an answer (not JSON) declines the task instead of doing it."""
    return bool(_REFUSAL.match(text.strip()))


def json_answer(text: str, *, model: str, required_keys: tuple[str, ...] = ()) -> dict:
    """Return the JSON object a model answered, with every required key; raise LLMOutputError.

    Tried in order: the whole text; each ``` fence; the first object found in the text (a JSON
    value starting at a "{" and parsed to its end, prose before and after ignored).
    """
    value = _first_json(text)
    if value is _NOTHING:
        if is_refusal(text):
            raise LLMRefusal(f"model {model} refused: {excerpt(text)!r}")
        raise LLMOutputError(f"model {model} did not answer JSON: {excerpt(text)!r}")
    if not isinstance(value, dict):
        kind = _JSON_TYPES.get(type(value), type(value).__name__)
        raise LLMOutputError(
            f"model {model} answered a JSON {kind}, not an object: {excerpt(text)!r}"
        )
    missing = [key for key in required_keys if key not in value]
    if missing:
        raise LLMOutputError(
            f"model {model} left out {', '.join(missing)} from its answer: {excerpt(text)!r}"
        )
    return value


_NOTHING = object()


def _first_json(text: str):
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    for fenced in _FENCED.finditer(text):
        try:
            return json.loads(fenced.group(1))
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    for start in (match.start() for match in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        return value
    return _NOTHING


def identifiers_in(text: str) -> set[str]:
    """Return the identifiers of text: ids, URLs, addresses, versions, numbers, paths."""
    return {match.group(0).rstrip(".,;:") for match in IDENTIFIER.finditer(text)}


def identifiers_dropped(source: str, answer: str) -> list[str]:
    """Return the identifiers of source that answer does not hold, sorted."""
    return sorted(token for token in identifiers_in(source) if token not in answer)


def errors_dropped(source: str, answer: str) -> list[str]:
    """Return the error lines of source that answer lost: an error is kept when the answer
    says that something failed and holds every identifier of the error's line."""
    dropped = []
    mentions_failure = bool(_ERROR_WORD.search(answer))
    for line in source.splitlines():
        if not _ERROR_LINE.search(line):
            continue
        if not mentions_failure or not all(token in answer for token in identifiers_in(line)):
            dropped.append(line.strip())
    return dropped


def answer_problem(
    source: str, answer: str, *, source_length: int | None = None, may_grow: bool = False
) -> str:
    """Return why answer must not stand for source ("" when it may).

    source holds what the answer must keep; source_length is the length of what the answer
    condenses when that is not source itself (the messages behind a digest); may_grow: the
    answer need not be shorter (a memory rewritten from one short message).
    """
    if not answer.strip():
        return "the answer is empty"
    length = len(source) if source_length is None else source_length
    if not may_grow and len(answer) > length + LENGTH_SLACK:
        return (
            f"the answer ({len(answer)} characters) is longer than its source ({length} characters)"
        )
    reasons = []
    missing = identifiers_dropped(source, answer)
    if missing:
        reasons.append(f"it dropped {', '.join(missing[:_SHOWN])}" + _more(missing))
    errors = errors_dropped(source, answer)
    if errors:
        shown = "; ".join(repr(excerpt(line)[:120]) for line in errors[:3])
        reasons.append(f"it dropped the error {shown}" + _more(errors, 3))
    return "; ".join(reasons)


def _more(items: list, shown: int = _SHOWN) -> str:
    return f" and {len(items) - shown} more" if len(items) > shown else ""
