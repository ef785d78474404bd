"""note_write / note_read: the plain functions a tool layer calls with an agent and arguments."""

import pytest

from apps.audit.models import AuditEvent
from apps.core.errors import Conflict, NotFound
from apps.notes.services import note_read, note_write


def test_note_write_creates_then_replaces_and_note_read_finds_it(alice):
    first = note_write(agent=alice.agent, path="ideas.md", content="one [[later]]")
    second = note_write(agent=alice.agent, path="ideas.md", content="two", tags=["idea"])

    read = note_read(agent=alice.agent, path="ideas.md")

    assert first.id == second.id == read.id
    assert (read.content, read.version, read.tags, read.scope) == ("two", 2, ["idea"], "personal")
    assert list(read.links.values_list("target_path", flat=True)) == []
    assert AuditEvent.objects.filter(actor="agent:acme/alice", object_id=str(read.id)).count() == 2


def test_note_write_with_the_version_read_refuses_a_stale_one(alice):
    note_write(agent=alice.agent, path="a.md", content="one")
    note_write(agent=alice.agent, path="a.md", content="two", version=1)

    with pytest.raises(Conflict) as stale:
        note_write(agent=alice.agent, path="a.md", content="three", version=1)

    assert stale.value.details == {"current_version": 2}
    assert note_read(agent=alice.agent, path="a.md").content == "two"


def test_note_read_prefers_the_agents_own_note_and_hides_others(alice, bob, carol):
    note_write(agent=bob.agent, path="rota.md", content="team rota", scope="shared")
    note_write(agent=bob.agent, path="diary.md", content="bob's diary")
    note_write(agent=alice.agent, path="rota.md", content="alice's rota")

    assert note_read(agent=alice.agent, path="rota.md").content == "alice's rota"
    assert note_read(agent=alice.agent, path="rota.md", scope="shared").content == "team rota"
    assert note_read(agent=bob.agent, path="rota.md").content == "team rota"
    for agent, path in ((alice.agent, "diary.md"), (carol.agent, "rota.md")):
        with pytest.raises(NotFound):
            note_read(agent=agent, path=path)
