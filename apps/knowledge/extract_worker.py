"""Extract the text of one PDF in a child process: `python -m apps.knowledge.extract_worker PATH`.

Writes a JSON list of pages ({"page", "text"}) to stdout, or an error line to stderr with
exit status 2. The parent runs this under memory and time limits, so a malicious or broken PDF
(a decompression bomb, a parser loop) costs a bounded amount and fails cleanly.
"""

import json
import sys

from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError, LimitReachedError, PdfReadError


def pages(path: str) -> list[dict]:
    """Return the text of every page of the PDF at path, numbered from 1."""
    reader = PdfReader(path)
    if reader.is_encrypted and not reader.decrypt(""):
        raise FileNotDecryptedError("encrypted")
    return [
        {"page": number, "text": page.extract_text() or ""}
        for number, page in enumerate(reader.pages, start=1)
    ]


def main(path: str) -> int:
    try:
        result = pages(path)
    except FileNotDecryptedError:
        print("The PDF is encrypted; upload a copy without a password.", file=sys.stderr)
        return 2
    except MemoryError:
        print("The PDF expands to more memory than allowed.", file=sys.stderr)
        return 2
    except LimitReachedError:
        print("The PDF holds a stream that expands beyond the allowed size.", file=sys.stderr)
        return 2
    except Exception as exc:  # any parser failure means the file cannot be read
        name = "damaged" if isinstance(exc, PdfReadError) else "unreadable"
        print(f"The PDF is {name} ({exc.__class__.__name__}: {exc}).", file=sys.stderr)
        return 2
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
