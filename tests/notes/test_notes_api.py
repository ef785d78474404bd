"""GET/POST /notes, GET/PATCH/DELETE /notes/{id}: scopes, isolation, versions, links, bad input."""

import pytest

from apps.audit.models import AuditEvent
from tests.notes.conftest import listed, write


def test_it_writes_a_personal_note_and_reads_it_back(alice):
    note = write(alice, "ops/deploy.md", "# Deploy\nRun `make release`.", tags=["ops", "release"])

    read = alice.get(f"/api/v1/notes/{note['id']}").json()

    assert read["scope"] == "personal" and read["path"] == "ops/deploy.md"
    assert read["title"] == "Deploy"  # from the first heading
    assert read["content"] == "# Deploy\nRun `make release`."
    assert read["tags"] == ["ops", "release"] and read["version"] == 1
    assert read["links"] == [] and read["backlinks"] == []
    assert read["updated_by"] == "agent:acme/alice"


def test_personal_notes_are_invisible_to_other_agents(alice, bob, carol):
    mine = write(alice, "me/secret.md", "alice's private plan")

    for outsider in (bob, carol):
        url = f"/api/v1/notes/{mine['id']}"
        assert outsider.get(url).status_code == 404
        assert outsider.patch(url, {"version": 1, "content": "x"}).status_code == 404
        assert outsider.delete(url).status_code == 404
        assert listed(outsider) == []
    assert alice.get(f"/api/v1/notes/{mine['id']}").json()["content"] == "alice's private plan"


def test_shared_notes_are_visible_within_the_project_only(alice, bob, carol):
    shared = write(alice, "team/oncall.md", "Pager rota", scope="shared")
    url = f"/api/v1/notes/{shared['id']}"

    assert bob.get(url).status_code == 200
    assert listed(bob) == ["team/oncall.md"]
    changed = bob.patch(url, {"version": 1, "content": "Pager rota, updated by bob"})
    assert changed.status_code == 200 and changed.json()["version"] == 2
    assert carol.get(url).status_code == 404
    assert carol.patch(url, {"version": 2, "content": "x"}).status_code == 404
    assert carol.delete(url).status_code == 404
    assert listed(carol) == []
    assert alice.get(url).json()["content"] == "Pager rota, updated by bob"


def test_a_stale_version_is_refused_with_the_current_one(alice):
    note = write(alice, "a.md", "one")
    url = f"/api/v1/notes/{note['id']}"
    assert alice.patch(url, {"version": 1, "content": "two"}).json()["version"] == 2

    stale = alice.patch(url, {"version": 1, "content": "lost update"})

    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "stale_version"
    assert stale.json()["error"]["details"] == {"current_version": 2}
    assert alice.get(url).json()["content"] == "two"


def test_a_title_given_empty_stays_empty(alice):
    assert write(alice, "a.md", "# Heading", title="")["title"] == ""
    assert write(alice, "b.md", "no heading")["title"] == "b"


def test_a_patch_that_changes_nothing_keeps_the_version(alice):
    note = write(alice, "a.md", "one")

    same = alice.patch(f"/api/v1/notes/{note['id']}", {"version": 1, "content": "one"})

    assert same.status_code == 200 and same.json()["version"] == 1


def test_one_path_per_scope(alice, bob):
    first = write(alice, "ops/deploy.md", "mine")
    write(alice, "ops/deploy.md", "the team's", scope="shared")  # another scope: fine
    write(bob, "ops/deploy.md", "bob's own")  # another agent: fine

    taken = write(alice, "ops/deploy.md", "again", expect=409)
    other = write(alice, "ops/other.md", "x")
    renamed = alice.patch(f"/api/v1/notes/{other['id']}", {"version": 1, "path": "ops/deploy.md"})

    assert taken["error"]["code"] == "path_taken"
    assert taken["error"]["details"] == {"note_id": first["id"]}
    assert renamed.status_code == 409 and renamed.json()["error"]["code"] == "path_taken"


def test_wikilinks_resolve_to_backlinks_and_missing_links_are_kept(alice):
    index = write(alice, "index.md", "See [[ops/deploy]] and [[ops/rollback.md|how to undo]].")
    deploy = write(alice, "ops/deploy.md", "Deploy steps; back to [[index]].")

    read = alice.get(f"/api/v1/notes/{index['id']}").json()

    assert read["links"] == [
        {"path": "ops/deploy.md", "note_id": deploy["id"], "missing": False},
        {"path": "ops/rollback.md", "note_id": None, "missing": True},
    ]
    backlinks = alice.get(f"/api/v1/notes/{deploy['id']}").json()["backlinks"]
    assert [b["note_id"] for b in backlinks] == [index["id"]]
    assert deploy["links"] == [{"path": "index.md", "note_id": index["id"], "missing": False}]

    rollback = write(alice, "ops/rollback.md", "Undo steps.")

    links = alice.get(f"/api/v1/notes/{index['id']}").json()["links"]
    assert links[1] == {"path": "ops/rollback.md", "note_id": rollback["id"], "missing": False}
    assert [b["path"] for b in rollback["backlinks"]] == ["index.md"]


def test_links_never_reveal_another_agents_personal_note(alice, bob):
    write(bob, "bob/diary.md", "bob's diary")
    shared = write(alice, "team/index.md", "[[bob/diary]] [[team/rota]]", scope="shared")
    bobs_link = write(bob, "bob/todo.md", "read [[team/index]]")
    rota = write(bob, "team/rota.md", "Rota", scope="shared")

    as_alice = alice.get(f"/api/v1/notes/{shared['id']}").json()
    as_bob = bob.get(f"/api/v1/notes/{shared['id']}").json()

    # A shared note's links reach shared notes only, whoever reads them.
    assert as_alice["links"][0] == {"path": "bob/diary.md", "note_id": None, "missing": True}
    assert as_bob["links"] == as_alice["links"]
    assert as_alice["links"][1]["note_id"] == rota["id"]
    # Bob's personal note links to the shared one; only bob sees that backlink.
    assert as_alice["backlinks"] == []
    assert [b["note_id"] for b in as_bob["backlinks"]] == [bobs_link["id"]]


def test_deleting_a_note_leaves_links_to_it_missing(alice):
    target = write(alice, "t.md", "target")
    source = write(alice, "s.md", "to [[t]]")

    assert alice.delete(f"/api/v1/notes/{target['id']}").status_code == 204

    assert alice.get(f"/api/v1/notes/{target['id']}").status_code == 404
    links = alice.get(f"/api/v1/notes/{source['id']}").json()["links"]
    assert links == [{"path": "t.md", "note_id": None, "missing": True}]


def test_lists_filter_by_scope_tag_and_path_prefix(alice):
    write(alice, "ops/deploy.md", tags=["ops"])
    write(alice, "ops/rollback.md", tags=["ops", "urgent"])
    write(alice, "home.md", tags=["urgent"])
    write(alice, "ops/team.md", scope="shared", tags=["ops"])

    assert sorted(listed(alice)) == ["home.md", "ops/deploy.md", "ops/rollback.md", "ops/team.md"]
    assert listed(alice, scope="shared") == ["ops/team.md"]
    assert sorted(listed(alice, tag="urgent")) == ["home.md", "ops/rollback.md"]
    assert sorted(listed(alice, path_prefix="ops/", scope="personal")) == [
        "ops/deploy.md",
        "ops/rollback.md",
    ]
    assert listed(alice, tag="nothing") == []


def test_lists_page_by_cursor(alice):
    for n in range(5):
        write(alice, f"n{n}.md")

    first = alice.get("/api/v1/notes", {"limit": 2}).json()
    second = alice.client.get(first["next"]).json()
    third = alice.client.get(second["next"]).json()

    pages = [[n["path"] for n in page["results"]] for page in (first, second, third)]
    assert pages == [["n4.md", "n3.md"], ["n2.md", "n1.md"], ["n0.md"]]
    assert third["next"] is None


@pytest.mark.parametrize(
    "params, name",
    [
        ({"scope": "team"}, "scope"),
        ({"tag": ""}, "tag"),
        ({"path_prefix": ""}, "path_prefix"),
        ({"limit": "0"}, "limit"),
        ({"cursor": "garbage"}, "cursor"),
    ],
)
def test_bad_list_parameters_are_named(alice, params, name):
    response = alice.get("/api/v1/notes", params)

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(f"{name}:")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"path": "/abs.md"}, "path"),
        ({"path": "no-suffix"}, "path"),
        ({"path": "a/../b.md"}, "path"),
        ({"path": "a//b.md"}, "path"),
        ({"path": " a.md"}, "path"),
        ({"path": "a.md", "scope": "team"}, "scope"),
        ({"path": "a.md", "tags": ["has space"]}, "tags"),
        ({"path": "a.md", "tags": "ops"}, "tags"),
        ({"path": "a.md", "title": "two\nlines"}, "title"),
        ({"path": "a.md", "content": "nul \u0000"}, "content"),
        ({"path": "a.md", "agent": "bob"}, "agent"),
        ({}, "path"),
    ],
)
def test_bad_notes_are_refused_naming_the_field(alice, body, field):
    response = alice.post("/api/v1/notes", body)

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["message"].startswith(field), error
    assert list(error["details"]) == [field] and error["details"][field][0], error
    assert listed(alice) == []


@pytest.mark.parametrize(
    "body, field",
    [
        ({"content": "x"}, "version"),
        ({"version": 0, "content": "x"}, "version"),
        ({"version": 1, "scope": "shared"}, "scope"),
        ({"version": 1, "path": "bad"}, "path"),
    ],
)
def test_bad_patches_are_refused_naming_the_field(alice, body, field):
    note = write(alice, "a.md", "one")

    response = alice.patch(f"/api/v1/notes/{note['id']}", body)

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["message"].startswith(field)
    assert list(error["details"]) == [field] and error["details"][field][0], error


def test_writes_are_audited(alice):
    note = write(alice, "a.md", "one")
    alice.patch(f"/api/v1/notes/{note['id']}", {"version": 1, "content": "two"})
    alice.delete(f"/api/v1/notes/{note['id']}")

    events = AuditEvent.objects.filter(object_id=note["id"]).order_by("id")

    assert [e.action for e in events] == ["note.create", "note.update", "note.delete"]
    assert events[1].before["content"] == "one" and events[1].after["content"] == "two"
    assert events[1].after["version"] == 2
    assert {e.actor for e in events} == {"agent:acme/alice"}
    assert events[2].after is None
