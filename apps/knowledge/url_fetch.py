"""Fetch a web page added by address into its document, in the worker.

HTML is reduced to its main content with readability-lxml (the article, without navigation,
headers, footers and sidebars); the existing HTML reader then turns that into sections by
heading. Plain text and Markdown pages are kept as they are, PDFs as a file. The document's
content hash becomes the hash of what was kept, so a page whose content the knowledge base
already holds is reported as a duplicate of that document rather than stored twice.
"""

import hashlib
import logging

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from readability import Document as Readable

from apps.core.ids import uuid7
from apps.core.outbound import OutboundError, OutboundRefused, fetch
from apps.knowledge.extract import ExtractionError
from apps.knowledge.models import Document
from apps.knowledge.sniff import HTML, MARKDOWN, PDF, TEXT

logger = logging.getLogger(__name__)
ACCEPT = (
    "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9,application/pdf;q=0.8"
)
_TEXT_TYPES = {"text/plain": TEXT, "text/markdown": MARKDOWN, "text/x-markdown": MARKDOWN}
_HTML_TYPES = {"text/html", "application/xhtml+xml"}


class PageRetry(Exception):
    """The page could not be fetched this time (timeout, 5xx); the job tries again."""


def page_fetch(*, document: Document) -> None:
    """Fetch the document's URL and store its main text (or PDF); raise ExtractionError if not.

    Raises PageRetry for failures that a later attempt may not meet.
    """
    url = document.metadata["url"]
    try:
        page = fetch(
            url,
            max_bytes=settings.KNOWLEDGE_URL_MAX_BYTES,
            timeout=settings.KNOWLEDGE_URL_TIMEOUT,
            accept=ACCEPT,
        )
    except OutboundRefused as exc:
        raise ExtractionError(f"Refused to fetch {url}: {exc}") from None
    except OutboundError as exc:
        if exc.retryable:
            raise PageRetry(str(exc)) from None
        raise ExtractionError(f"Could not fetch the page: {exc}") from None
    fields = _page_fields(document, page)
    try:
        with transaction.atomic():
            if fields.pop("pdf", None) is not None:
                document.file.save(f"{uuid7().hex}.pdf", ContentFile(page.body), save=False)
                fields["file"] = document.file.name
            Document.objects.filter(pk=document.pk).update(**fields)
    except IntegrityError:
        if document.file:
            document.file.delete(save=False)
        twin = Document.objects.filter(
            knowledge_base=document.knowledge_base_id, content_hash=fields["content_hash"]
        ).first()
        where = f"document {twin.id} (“{twin.title}”)" if twin else "another document"
        raise ExtractionError(
            f"The page's content is already in this knowledge base as {where}."
        ) from None
    document.refresh_from_db()


def _page_fields(document: Document, page) -> dict:
    """Return the document's new fields for the fetched page; ExtractionError if unreadable."""
    fields = {
        "size_bytes": len(page.body),
        "metadata": {**document.metadata, "fetched_url": page.url},
    }
    title = ""
    if page.content_type in _HTML_TYPES:
        html = page.body.decode(page.charset, "replace") if _known(page.charset) else page.body
        readable = Readable(html)
        text = readable.summary(html_partial=True)
        title = (readable.title() or "").strip()
        fields.update(text=text, mime_type=HTML, content_hash=_hash(text.encode()))
    elif page.content_type in _TEXT_TYPES:
        text = page.body.decode(page.charset if _known(page.charset) else "utf-8", "replace")
        fields.update(
            text=text, mime_type=_TEXT_TYPES[page.content_type], content_hash=_hash(text.encode())
        )
    elif page.content_type == "application/pdf" or page.body[:5] == b"%PDF-":
        fields.update(mime_type=PDF, content_hash=_hash(page.body), pdf=True)
    else:
        shown = page.content_type or "of no declared type"
        raise ExtractionError(
            f"The page is {shown}; web pages are read when they are HTML, text, Markdown or PDF."
        )
    if not page.body.strip():
        raise ExtractionError("The page is empty.")
    if title and document.title == document.metadata["url"][:300]:
        fields["title"] = title[:300]  # no title was given: the page's own replaces its address
    return fields


def _known(charset: str | None) -> bool:
    if not charset:
        return False
    try:
        "".encode(charset)
    except LookupError:
        return False
    return True


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
