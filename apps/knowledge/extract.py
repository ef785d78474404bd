"""Turn a stored document into sections of text: pages of a PDF, heading sections of Markdown or
HTML, paragraphs of plain text."""

import json
import os
import re
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser

from django.conf import settings

from apps.knowledge.sniff import HTML, MARKDOWN, PDF


@dataclass
class Section:
    text: str
    page: int | None = None
    heading: str = ""


class ExtractionError(Exception):
    """The document's text cannot be extracted; the message says why, for the uploader."""


def extract_sections(*, path: str | None, text: str | None, mime: str) -> list[Section]:
    """Return the document's sections in order."""
    if mime == PDF:
        return _pdf_sections(path)
    if text is None:
        with open(path, "rb") as file:
            text = file.read().decode("utf-8", errors="replace")
    if mime == HTML:
        return _heading_sections(_html_to_markdown(text))
    if mime == MARKDOWN:
        return _heading_sections(text)
    return [Section(text=text)]


def _pdf_sections(path: str) -> list[Section]:
    limit_mb = settings.KNOWLEDGE_EXTRACT_MEMORY_MB

    def limits():
        # Bound the child's memory, and end it if the worker that started it dies.
        resource.setrlimit(resource.RLIMIT_AS, (limit_mb * 2**20, limit_mb * 2**20))
        _die_with_parent()

    try:
        done = subprocess.run(
            [sys.executable, "-m", "apps.knowledge.extract_worker", path],
            capture_output=True,
            timeout=settings.KNOWLEDGE_EXTRACT_TIMEOUT,
            preexec_fn=limits,
            cwd=settings.BASE_DIR,
            env={**os.environ, "PYTHONPATH": str(settings.BASE_DIR)},
        )
    except subprocess.TimeoutExpired:
        raise ExtractionError(
            f"Reading the PDF took longer than {settings.KNOWLEDGE_EXTRACT_TIMEOUT} s."
        ) from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        if done.returncode == 2 and message:
            raise ExtractionError(message[-1])
        raise ExtractionError(
            f"Reading the PDF needed more than {limit_mb} MB of memory or crashed the reader."
        )
    pages = json.loads(done.stdout)
    return [Section(text=page["text"], page=page["page"]) for page in pages]


def _die_with_parent() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass  # not Linux: the timeout still bounds an orphaned child


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def _heading_sections(markdown: str) -> list[Section]:
    """Split Markdown at its headings; each section knows its heading path ('A > B')."""
    sections: list[Section] = []
    path: list[str] = []
    lines: list[str] = []

    def flush():
        body = "\n".join(lines).strip()
        if body:
            sections.append(Section(text=body, heading=" > ".join(path)))
        lines.clear()

    in_fence = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match:
            flush()
            level = len(match.group(1))
            path[:] = path[: level - 1] + [match.group(2).strip()]
            continue
        lines.append(line)
    flush()
    return sections


_SKIPPED_TAGS = {"script", "style", "noscript", "template", "svg", "head"}
_BLOCK_TAGS = {"p", "div", "li", "br", "tr", "section", "article", "pre", "blockquote", "table"}


class _HtmlText(HTMLParser):
    """Collect visible text of HTML, with headings rewritten as Markdown headings."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in _SKIPPED_TAGS:
            self.skipping += 1
        elif tag in {"h1", "h2", "h3", "h4", "h5", "h6"}:
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n" if tag != "br" else "\n")

    def handle_endtag(self, tag):
        if tag in _SKIPPED_TAGS:
            self.skipping = max(0, self.skipping - 1)
        elif tag in {"h1", "h2", "h3", "h4", "h5", "h6"} or tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(re.sub(r"[ \t\r\n]+", " ", data))


def _html_to_markdown(html: str) -> str:
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    return re.sub(r"\n[ \t]+", "\n", re.sub(r"\n{3,}", "\n\n", text)).strip()
