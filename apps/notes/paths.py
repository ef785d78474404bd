"""Note paths, tags and `[[wikilinks]]`: what is valid, and how a link names a path."""

import re
from typing import NoReturn

from apps.core.errors import ApplicationError
from apps.core.text import name_normalise, name_problem, text_problem

PATH_MAX = 255
TAG_MAX = 64
TAGS_MAX = 32
TITLE_MAX = 300
SUFFIX = ".md"
# [[target]] or [[target|label]]; a target holds no brackets, pipes or line breaks.
WIKILINK = re.compile(r"\[\[([^\[\]|\n]+)(?:\|([^\[\]\n]+))?\]\]")
_TAG = re.compile(r"^[\w][\w\-./:]*$", re.UNICODE)


def path_problem(path: str) -> str | None:
    """Say what is wrong with a note path, or return None when it is valid.

    A path is relative, `/`-separated and ends in `.md` (a note is exported as that file), so
    no segment may be empty, `.` or `..`, or begin or end with a space; like any name it holds
    no control or bidirectional control characters (apps/core/text.py).
    """
    if not path:
        return "must not be blank"
    if len(path) > PATH_MAX:
        return f"is {len(path)} characters; at most {PATH_MAX}"
    problem = name_problem(path)
    if problem:
        return problem
    if "\\" in path:
        return "must not contain backslashes; separate folders with /"
    if path.startswith("/"):
        return "must be relative (no leading /), e.g. ops/deploy.md"
    if not path.endswith(SUFFIX) or path == SUFFIX or path.endswith("/" + SUFFIX):
        return "must name a markdown file ending in .md, e.g. ops/deploy.md"
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            return "must not have empty, '.' or '..' segments"
        if segment != segment.strip():
            return "must not have a segment that begins or ends with a space"
    return None


def refuse(field: str, message: str) -> NoReturn:
    """Raise the 400 for one bad field: the message and details both name it and the fix."""
    raise ApplicationError(f"{field}: {message}", details={field: [message]})


def path_check(path: str, *, field: str = "path") -> str:
    """Return the path in NFC (one note per path however its letters were composed), or
    refuse it naming the field."""
    path = name_normalise(path)
    problem = path_problem(path)
    if problem:
        refuse(field, f"{path!r} {problem}.")
    return path


def link_target(text: str) -> str | None:
    """Return the path a wikilink's target names (`ops/deploy` → `ops/deploy.md`), or None.

    A `#heading` after the path is dropped; a target that is no valid path is plain text.
    """
    target = name_normalise(text.split("#", 1)[0].strip().lstrip("/"))
    if target and not target.endswith(SUFFIX):
        target += SUFFIX
    return target if path_problem(target) is None else None


def links_in(content: str) -> list[str]:
    """Return the distinct paths the content's wikilinks name, in order of appearance."""
    found: list[str] = []
    for match in WIKILINK.finditer(content):
        target = link_target(match.group(1))
        if target is not None and target not in found:
            found.append(target)
    return found


def tags_check(tags: list[str]) -> list[str]:
    """Return the tags, each checked; a tag repeated is kept once, in its first place."""
    if len(tags) > TAGS_MAX:
        refuse("tags", f"{len(tags)} given; at most {TAGS_MAX}.")
    clean: list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not _TAG.match(tag) or len(tag) > TAG_MAX:
            refuse(
                "tags",
                f"{tag!r} is not a tag; use up to {TAG_MAX} letters, digits, and - _ . / : "
                "(starting with a letter or digit), no spaces.",
            )
        if tag not in clean:
            clean.append(tag)
    return clean


def title_check(title: str) -> str:
    if len(title) > TITLE_MAX:
        refuse("title", f"{len(title)} characters; at most {TITLE_MAX}.")
    if "\n" in title or "\r" in title or text_problem(title):
        refuse("title", "must be one line of storable text.")
    return title


def title_default(path: str, content: str) -> str:
    """The title of a note written without one: its first `# heading`, else its file name."""
    for line in content.splitlines():
        if line.startswith("# "):
            heading = line[2:].strip()
            if heading:
                return heading[:TITLE_MAX]
    return path.rsplit("/", 1)[-1].removesuffix(SUFFIX)
