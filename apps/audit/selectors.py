import difflib
import json
import re
from dataclasses import dataclass, field

from apps.audit.models import AuditEvent


def audit_list(*, action: str | None = None, actor: str | None = None):
    events = AuditEvent.objects.select_related("project")
    if action:
        events = events.filter(action=action)
    if actor:
        events = events.filter(actor__icontains=actor)
    return events


def audit_actions() -> list[str]:
    return sorted(set(AuditEvent.objects.values_list("action", flat=True).distinct()))


def audit_search(*, action: str | None = None, actor: str | None = None, project_id=None):
    """Events newest first, narrowed by action, actor (substring) and project."""
    # Ids order by millisecond only; the timestamp keeps events of one millisecond in order.
    events = audit_list(action=action, actor=actor).order_by("-at", "-id")
    return events.filter(project_id=project_id) if project_id else events


@dataclass(frozen=True)
class AuditChange:
    key: str  # "" when before/after are not objects
    before: str  # compact JSON; "" when absent
    after: str
    words: list = field(default_factory=list)  # word_diff(before, after) when both are present


WORD_CONTEXT = 6  # unchanged words kept on each side of a change; longer runs between are elided


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """The words that changed between two texts, as ("same" | "del" | "ins" | "gap", text).

    Whole texts are compared word by word (whitespace kept), so a change deep in a long entry is
    shown, not cut off; long unchanged stretches between changes become one "gap".
    """
    old, new = _words(before), _words(after)
    segments: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            segments.extend(_context(old[i1:i2], first=i1 == 0, last=i2 == len(old)))
            continue
        if i2 > i1:
            segments.append(("del", "".join(old[i1:i2])))
        if j2 > j1:
            segments.append(("ins", "".join(new[j1:j2])))
    return segments


def _words(text: str) -> list[str]:
    return [token for token in re.split(r"(\s+)", text) if token]


def _context(tokens: list[str], *, first: bool, last: bool) -> list[tuple[str, str]]:
    """Unchanged tokens: all of them when few, else the ends that touch a change, and a gap."""
    keep = WORD_CONTEXT * 2  # a word and the space after it are two tokens
    head = [] if first else tokens[:keep]
    tail = [] if last else tokens[-keep:]
    if len(tokens) <= len(head) + len(tail) + 2:
        return [("same", "".join(tokens))]
    return [
        segment
        for segment in (("same", "".join(head)), ("gap", "…"), ("same", "".join(tail)))
        if segment[1]
    ]


def audit_event_changes(*, event: AuditEvent) -> list[AuditChange]:
    """The top-level fields an event changed, as compact JSON, for a short before → after list."""
    before, after = event.before, event.after
    if isinstance(before or {}, dict) and isinstance(after or {}, dict):
        before, after = before or {}, after or {}
        keys = [
            key
            for key in sorted(before.keys() | after.keys())
            if before.get(key, _MISSING) != after.get(key, _MISSING)
        ]
        return [_change(key, before.get(key, _MISSING), after.get(key, _MISSING)) for key in keys]
    if before == after:
        return []
    return [
        _change("", _MISSING if before is None else before, _MISSING if after is None else after)
    ]


def _change(key: str, before, after) -> AuditChange:
    """One changed field; text fields (and JSON of others) are compared word by word."""
    old = "" if before is _MISSING else _text(before)
    new = "" if after is _MISSING else _text(after)
    words = word_diff(old, new) if old and new else []
    return AuditChange(key=key, before=old, after=new, words=words)


def _text(value) -> str:
    return value if isinstance(value, str) else _compact(value)


def audit_pretty(value) -> str:
    """Indented JSON of a before/after value, for reading in full."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


_MISSING = object()


def checkpoint_resumers(*, checkpoint_ids) -> dict[str, str]:
    """Who resumed each of these checkpoints, by checkpoint id (as the audit log recorded it)."""
    ids = [str(checkpoint_id) for checkpoint_id in checkpoint_ids]
    if not ids:
        return {}
    events = AuditEvent.objects.filter(
        action="checkpoint.resume", object_type="checkpoint", object_id__in=ids
    )
    return dict(events.values_list("object_id", "actor"))
