"""A tool step's outcome: whether a message reports a failure, and why.

The one definition every part of the server uses (console, observer, reflector, consolidation),
so that a result counted as an error in one place is one everywhere.

A message is an error when its kind is error, or when it is a tool result that says so:
  - its result is `content` parsed as JSON when that is a JSON object, else `payload` when it is
    one; the result fails when it has a non-empty `error`, `ok: false`, `success: false`,
    `isError`/`is_error: true`, a `status` or `status_code` of 400 or more (a number or a numeric
    string) or a `status` of "error" / "fail" / "failed" / "failure";
  - plain-text content fails when its first line starts as an error does: `Error: …`,
    `Traceback (most recent call last):`, `ValueError: …`, `Exception in thread …`, `panic: …`,
    `HTTP/1.1 502 Bad Gateway`, `Failed to …`.
Only the start of a text is read, so a result that merely mentions "errors" is not one.
"""

import json
import re
from dataclasses import dataclass

# Leading words of a first line that reports a failure (a label, then ":", "-", "[", "(" or a
# status number), e.g. "Error: not found", "ERROR - timeout", "Fatal error: …", "Error 502".
_LABEL = re.compile(
    r"^\W{0,2}(?:uncaught\s+)?(?:error|fatal(?:\s+error)?|failure|failed|exception|panic)"
    r"(?:\s*[:\[\]()]|\s+-\s|\s+\d{3}\b|\s+to\b|\s*$)",
    re.IGNORECASE,
)
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\)")
# An exception's name, maybe dotted, then its message: "KeyError: 'id'",
# "requests.exceptions.ConnectionError: …", "java.lang.IllegalStateException".
_EXCEPTION = re.compile(
    r"^(?:Uncaught\s+)?(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*(?:Error|Exception|Fault)(?::|\s*$)"
    r"|^Exception in thread\b"
)
_HTTP_STATUS = re.compile(r"^HTTP/\d(?:\.\d)?\s+(\d{3})\b")
_FAILED_STATUS = frozenset({"error", "fail", "failed", "failure"})
_FIRST_LINE_CHARS = 300


@dataclass(frozen=True)
class Outcome:
    """Whether a message reports a failure, and the rule that decided it ("" when it did not)."""

    error: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.error


OK = Outcome(False)


def message_outcome(message) -> Outcome:
    """Return whether message (anything with kind, role, content, payload) reports a failure."""
    if message.kind == "error":
        return Outcome(True, "kind is error")
    if not is_result(message):
        return OK
    content = message.content or ""
    parsed = _json(content)
    if isinstance(parsed, dict):
        return result_outcome(parsed, "content")
    if isinstance(message.payload, dict):
        outcome = result_outcome(message.payload, "payload")
        if outcome.error:
            return outcome
    if isinstance(parsed, str):  # a JSON string: its text is the result
        content = parsed
    return text_outcome(content)


def is_result(message) -> bool:
    """Whether message is what a tool answered (a tool result, or a tool's plain message)."""
    return message.kind == "tool_result" or (message.role == "tool" and message.kind == "message")


def result_outcome(result: dict, where: str = "result") -> Outcome:
    """Return whether a structured result says it failed, by its own fields."""
    error = result.get("error")
    if error not in (None, False, "", [], {}):
        return Outcome(True, f"{where} has error {_short(error)}")
    for key in ("ok", "success"):
        if result.get(key) is False:
            return Outcome(True, f"{where} has {key}: false")
    for key in ("isError", "is_error"):
        if result.get(key) is True:
            return Outcome(True, f"{where} has {key}: true")
    for key in ("status_code", "status"):
        status = result.get(key)
        if isinstance(status, str) and status.strip().lower() in _FAILED_STATUS:
            return Outcome(True, f"{where} has {key} {status.strip()!r}")
        number = _status_number(status)
        if number is not None and number >= 400:
            return Outcome(True, f"{where} has {key} {number}")
    return OK


def text_outcome(text: str) -> Outcome:
    """Return whether a plain-text result fails, by how its first non-blank line starts."""
    stripped = text.strip()
    first = stripped.split("\n", 1)[0].strip()[:_FIRST_LINE_CHARS] if stripped else ""
    http = _HTTP_STATUS.match(first)
    if http:
        status = int(http.group(1))
        return Outcome(True, f"HTTP status {status}") if status >= 400 else OK
    if _TRACEBACK.match(first) or _EXCEPTION.match(first) or _LABEL.match(first):
        return Outcome(True, f"text starts {_short(first)}")
    return OK


def _status_number(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _json(text: str):
    """The value a text holds as JSON, or None when it is not JSON."""
    stripped = text.strip()
    if not stripped or stripped[0] not in '{["':
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _short(value, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
