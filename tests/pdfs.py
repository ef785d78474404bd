"""Write small PDFs for tests and benchmarks: text pages, and the broken kinds uploads can be."""

import io
import zlib


def make_pdf(pages: list[str], *, bomb_bytes: int = 0) -> bytes:
    """Return a PDF with one page per text (lines split on newlines), Helvetica 11pt.

    With bomb_bytes, the first page's content stream is compressed and expands to that many bytes.
    """
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b"", b""]
    objects[2] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    kids = []
    for number, text in enumerate(pages):
        content = _content_stream(text)
        if number == 0 and bomb_bytes:
            packed = zlib.compress(content + b" " * bomb_bytes, 9)
            stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed)
            stream += packed + b"\nendstream"
        else:
            stream = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
        objects.append(stream)
        content_ref = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % content_ref
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % kid for kid in kids),
        len(kids),
    )
    return _serialise(objects)


def _content_stream(text: str) -> bytes:
    lines = [b"BT /F1 11 Tf 14 TL 72 740 Td"]
    for line in text.splitlines():
        escaped = line.encode("latin-1", "replace").replace(b"\\", b"\\\\")
        escaped = escaped.replace(b"(", b"\\(").replace(b")", b"\\)")
        lines.append(b"(" + escaped + b") Tj T*")
    lines.append(b"ET")
    return b"\n".join(lines)


def _serialise(objects: list[bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def encrypt_pdf(pdf: bytes, password: str = "secret") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def page_text(number: int, words: int = 250) -> str:
    """Return a page of plain prose that names its page number, in lines of about 12 words."""
    vocabulary = (
        "reactor coolant valve pressure sensor audit shift operator checklist manual "
        "turbine inspection routine emergency backup generator schedule maintenance"
    ).split()
    body = [vocabulary[(number * 7 + i * 3) % len(vocabulary)] for i in range(words)]
    lines = [f"Page {number} of the operations manual."]
    lines += [" ".join(body[i : i + 12]) for i in range(0, words, 12)]
    return "\n".join(lines)
