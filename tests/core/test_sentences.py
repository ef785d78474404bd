"""Sentences split where they end, and nowhere a dot only looks like an end."""

import pytest

from apps.core.sentences import sentences


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "We shipped build 4.2 today. It fixed the crash.",
            ["We shipped build 4.2 today.", "It fixed the crash."],
        ),
        (
            "Call https://api.example.com/v2.1/users first. Then retry.",
            ["Call https://api.example.com/v2.1/users first.", "Then retry."],
        ),
        ("The host is 10.0.0.5. Ping it.", ["The host is 10.0.0.5.", "Ping it."]),
        (
            "Write to ann.lee@example.co.uk. She answers.",
            ["Write to ann.lee@example.co.uk.", "She answers."],
        ),
        (
            "The electrician Mr. Okafor came at 9. He left at 11.",
            ["The electrician Mr. Okafor came at 9.", "He left at 11."],
        ),
        ("Bring tools, e.g. A drill. Done!", ["Bring tools, e.g. A drill.", "Done!"]),
        (
            "J. R. R. Tolkien wrote it. U.S. Army too.",
            ["J. R. R. Tolkien wrote it.", "U.S. Army too."],
        ),
        ("It costs 489.00 EUR. Pay by Friday?", ["It costs 489.00 EUR.", "Pay by Friday?"]),
        ("Edit config/settings.py. Restart.", ["Edit config/settings.py.", "Restart."]),
        ('She said "done." Then left.', ['She said "done."', "Then left."]),
        ("the meeting at 3 p.m. was moved", ["the meeting at 3 p.m. was moved"]),
        ("first line\nsecond line", ["first line", "second line"]),
        ("Version v2.1.3 is out... Try it.", ["Version v2.1.3 is out...", "Try it."]),
        ("", []),
    ],
)
def test_it_splits_at_ends_and_keeps_dotted_tokens_whole(text, expected):
    assert sentences(text) == expected
