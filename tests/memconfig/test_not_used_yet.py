"""Settings that nothing acts on yet are said to be so, and the list stays true."""

import re
from pathlib import Path

from apps.memconfig.schema import NOT_USED_YET, SETTINGS

APPS = Path(__file__).resolve().parents[2] / "apps"


def _code_naming(key: str) -> list[Path]:
    """Return the modules outside the settings schema and migrations that name the key."""
    word = re.compile(rf"\b{key}\b")
    return [
        path
        for path in APPS.rglob("*.py")
        if "migrations" not in path.parts
        and path.name != "schema.py"
        and word.search(path.read_text())
    ]


def test_every_setting_in_use_is_read_by_some_code():
    unread = [s.key for s in SETTINGS if s.in_use and not _code_naming(s.key)]

    assert unread == [], "settings no code reads: act on them or add them to NOT_USED_YET"


def test_no_code_reads_a_setting_said_to_be_not_used_yet():
    read = {key: _code_naming(key) for key in NOT_USED_YET if _code_naming(key)}

    assert read == {}, "these settings act now: remove them from NOT_USED_YET"


def test_the_config_endpoint_lists_the_settings_not_used_yet(alice):
    body = alice.get("/api/v1/config").json()

    assert sorted(body["not_used_yet"]) == sorted(NOT_USED_YET)
    assert set(body["not_used_yet"]) <= set(body["values"])
