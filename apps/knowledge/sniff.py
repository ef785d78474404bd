"""Decide what an uploaded file is from its bytes, not from its name or declared type."""

from pathlib import PurePosixPath

PDF = "application/pdf"
MARKDOWN = "text/markdown"
HTML = "text/html"
TEXT = "text/plain"
SUPPORTED = (PDF, MARKDOWN, HTML, TEXT)

# Leading bytes of formats that are never documents here.
_BINARY_SIGNATURES = {
    b"MZ": "a Windows executable",
    b"\x7fELF": "a Linux executable",
    b"\xcf\xfa\xed\xfe": "a macOS executable",
    b"\xca\xfe\xba\xbe": "a macOS or Java binary",
    b"PK\x03\x04": "a zip archive (docx, xlsx and odt are zip archives)",
    b"\x1f\x8b": "a gzip archive",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
}
_MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdown"}
_HTML_SUFFIXES = {".html", ".htm", ".xhtml"}


class UnsupportedContent(Exception):
    """The bytes are not a document type we can index; the message says what they look like."""


def sniff_mime(head: bytes, filename: str) -> str:
    """Return the MIME type of a file from its first bytes (and, for text, its name)."""
    suffix = PurePosixPath(filename.lower()).suffix
    if head.lstrip()[:5] == b"%PDF-" or b"%PDF-" in head[:1024]:
        return PDF
    for signature, what in _BINARY_SIGNATURES.items():
        if head.startswith(signature):
            raise UnsupportedContent(f"The file is {what}, not a PDF, Markdown, HTML or text file.")
    if suffix == ".pdf":
        raise UnsupportedContent("The file is named .pdf but its content is not a PDF.")
    if not _looks_like_text(head):
        raise UnsupportedContent(
            "The file is binary; upload a PDF, Markdown, HTML or UTF-8 text file."
        )
    if suffix in _HTML_SUFFIXES or head.lstrip()[:15].lower().startswith(
        (b"<!doctype html", b"<html")
    ):
        return HTML
    if suffix in _MARKDOWN_SUFFIXES:
        return MARKDOWN
    return TEXT


def _looks_like_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the sample is still text.
        return exc.start >= len(head) - 3
    return True
