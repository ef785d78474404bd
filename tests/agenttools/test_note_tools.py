"""The notes tools and MCP resources, over real HTTP with the official SDK client."""

import pytest
from mcp.shared.exceptions import MCPError

from apps.audit.models import AuditEvent
from apps.notes.models import Note
from apps.observations.models import Observation
from tests.agenttools.test_mcp import mcp_run, result_json
from tests.conftest import make_actor


@pytest.fixture
def alice(transactional_db):
    return make_actor("acme", "alice")


def test_a_note_written_is_read_and_found(live_server, alice):
    async def work(client):
        written = result_json(
            await client.call_tool(
                "note_write",
                {"path": "ops/deploy.md", "content": "Deploy with the blue-green script."},
            )
        )
        read = result_json(await client.call_tool("note_read", {"path": "ops/deploy.md"}))
        found = result_json(await client.call_tool("note_search", {"query": "blue-green"}))
        searched = result_json(
            await client.call_tool("search_memory", {"query": "blue-green", "scopes": ["notes"]})
        )
        changed = result_json(
            await client.call_tool(
                "note_write",
                {"path": "ops/deploy.md", "content": "Deploy on Fridays.", "version": 1},
            )
        )
        stale = await client.call_tool(
            "note_write", {"path": "ops/deploy.md", "content": "Never.", "version": 1}
        )
        return written, read, found, searched, changed, stale

    written, read, found, searched, changed, stale = mcp_run(live_server.url, alice.key, work)

    assert written["version"] == 1 and written["scope"] == "personal"
    assert read["id"] == written["id"]
    assert read["content"] == "Deploy with the blue-green script."
    assert [hit["id"] for hit in found["results"]] == [written["id"]]
    assert [(hit["type"], hit["path"]) for hit in searched["results"]] == [
        ("note", "ops/deploy.md")
    ]
    assert changed["version"] == 2
    assert stale.is_error and "Note version is 2, not 1" in stale.content[0].text
    assert Note.objects.get().content == "Deploy on Fridays."
    tool_writes = AuditEvent.objects.filter(action="tool.note_write")
    assert list(tool_writes.values_list("actor", flat=True)) == ["agent:acme/alice"] * 2
    note_writes = AuditEvent.objects.filter(object_type="note").values_list("action", flat=True)
    assert sorted(note_writes) == ["note.create", "note.update"]


def test_another_agents_key_cannot_reach_a_personal_note(live_server, alice):
    bob = make_actor("acme", "bob")

    async def write(client):
        result_json(
            await client.call_tool("note_write", {"path": "me.md", "content": "secret plans"})
        )
        result_json(
            await client.call_tool(
                "note_write", {"path": "team.md", "content": "shared plans", "scope": "shared"}
            )
        )

    async def look(client):
        read = await client.call_tool("note_read", {"path": "me.md"})
        found = result_json(await client.call_tool("note_search", {"query": "plans"}))
        shared = result_json(await client.call_tool("note_read", {"path": "team.md"}))
        listed = await client.list_resources()
        with pytest.raises(MCPError) as refused:
            await client.read_resource("notes://personal/me.md")
        return read, found, shared, listed, refused.value

    mcp_run(live_server.url, alice.key, write)
    read, found, shared, listed, refused = mcp_run(live_server.url, bob.key, look)

    assert read.is_error and read.content[0].text == "No note at path 'me.md'."
    assert [hit["path"] for hit in found["results"]] == ["team.md"]
    assert shared["content"] == "shared plans"
    assert [resource.uri for resource in listed.resources] == ["notes://shared/team.md"]
    assert "No note at path 'me.md'." in refused.message


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("note_write", {"path": "/abs.md", "content": "x"}, "path: '/abs.md' must be relative"),
        ("note_write", {"path": "a.txt", "content": "x"}, "ending in .md"),
        ("note_write", {"path": "a.md"}, "arguments.content: Field required"),
        ("note_read", {"path": "a.md", "scope": "team"}, "arguments.scope: "),
        ("note_search", {"query": ""}, "arguments.query: "),
    ],
)
def test_bad_note_arguments_say_what_to_fix(live_server, alice, name, arguments, says):
    async def work(client):
        return await client.call_tool(name, arguments)

    result = mcp_run(live_server.url, alice.key, work)

    assert result.is_error and says in result.content[0].text


def test_resources_are_the_notes_and_a_threads_observations(live_server, alice):
    bob = make_actor("acme", "bob")
    thread = alice.new_thread()
    for n, content in enumerate(["The user is Ann.", "Ann likes tea."], start=1):
        Observation.objects.create(
            thread_id=thread["id"], content=content, tokens=5, first_seq=n, last_seq=n, generation=1
        )
    uri = f"threads://{thread['id']}/observations"

    async def work(client):
        result_json(await client.call_tool("note_write", {"path": "a.md", "content": "# A\nbody"}))
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        note = await client.read_resource("notes://personal/a.md")
        observations = await client.read_resource(uri)
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("files:///etc/passwd")
        return listed, templates, note, observations, unknown.value

    async def as_bob(client):
        with pytest.raises(MCPError) as refused:
            await client.read_resource(uri)
        return refused.value

    listed, templates, note, observations, unknown = mcp_run(live_server.url, alice.key, work)
    refused = mcp_run(live_server.url, bob.key, as_bob)

    assert [(r.uri, r.name) for r in listed.resources] == [("notes://personal/a.md", "A")]
    assert [t.uri_template for t in templates.resource_templates] == [
        "threads://{thread_id}/observations"
    ]
    assert note.contents[0].text == "# A\nbody"
    assert observations.contents[0].text == "The user is Ann.\n\nAnn likes tea."
    assert "read notes://personal/<path>" in unknown.message
    assert refused.message == "No such thread."
