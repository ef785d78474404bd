"""Fail when the README outgrows a user's guide: more than MAX_LINES lines (issue #29).

Reference material belongs in a page under docs/, linked from the README. Usage:
    python .ci/readme_length.py [PATH]      # PATH defaults to the README beside .ci/
"""

import sys
from pathlib import Path

MAX_LINES = 400


def main(argv: list[str]) -> int:
    """Print the verdict for the README at argv[0] (or the repository's) and return 0 or 1."""
    path = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "README.md"
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if lines > MAX_LINES:
        print(
            f"{path}: {lines} lines, more than {MAX_LINES}: move reference material into a "
            "page under docs/ and link it from the README."
        )
        return 1
    print(f"{path}: {lines} lines (at most {MAX_LINES}).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
