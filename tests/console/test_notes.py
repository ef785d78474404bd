"""The notes browser: a tree by path, notes rendered safely with links and backlinks, and an
edit form that refuses a stale version."""

import re

import pytest

from apps.audit.models import AuditEvent
from apps.notes.models import Note
from tests.notes.conftest import write

EVIL = (
    "# Runbook\n<script>alert('x')</script>\n<img src=x onerror=alert(1)>\n"
    "[click](javascript:alert(1)) <a href='http://e' onclick='alert(1)'>raw</a>\n"
    "See [[ops/deploy|the deploy]] and [[ops/missing]]."
)


@pytest.fixture
def operator(as_role):
    return as_role("operator")


def test_the_tree_shows_a_projects_shared_notes_by_folder(alice, bob, carol, operator):
    write(alice, "ops/deploy.md", "d", scope="shared", tags=["ops"])
    write(alice, "ops/db/backup.md", "b", scope="shared")
    write(alice, "home.md", "h", scope="shared")
    write(alice, "mine.md", "alice's own")
    write(carol, "globex.md", "other project", scope="shared")
    project = alice.agent.project.id

    page = operator.get("/console/notes/", {"project": project}).content.decode()

    assert 'id="note-tree"' in page and "3 notes of acme" in page
    assert page.index(">ops/<") < page.index(">db/<") < page.index(">backup.md<")
    assert page.index(">backup.md<") < page.index(">deploy.md<") < page.index(">home.md<")
    assert '<span class="badge">ops</span>' in page
    assert "mine.md" not in page and "globex.md" not in page


def test_an_agents_personal_notes_have_a_tree_of_their_own(alice, bob, operator):
    write(alice, "mine.md", "alice's own")
    write(bob, "bobs.md", "bob's own")
    params = {"project": alice.agent.project.id, "owner": alice.agent.id}

    page = operator.get("/console/notes/", params).content.decode()

    assert "mine.md" in page and "bobs.md" not in page
    assert "alice (personal)" in page and "bob (personal)" in page


def test_a_note_is_rendered_without_any_raw_html_of_its_author(alice, operator):
    target = write(alice, "ops/deploy.md", "Deploy.", scope="shared")
    note = write(alice, "runbook.md", EVIL, scope="shared", tags=["ops"])

    page = operator.get(f"/console/notes/{note['id']}/").content.decode()

    body = page[page.index('id="note-body"') : page.index("</article>")]
    assert "<h1>Runbook</h1>" in body
    tags = re.findall(r"<[a-z][^>]*>", body)
    assert not [tag for tag in tags if re.search(r"\son\w+=|javascript:|^<(script|img)", tag)]
    assert "&lt;script&gt;alert" in body  # the author's markup shows as text
    assert f'<a href="/console/notes/{target["id"]}/" class="wikilink"' in body
    assert '<span class="wikilink missing" title="No note at ops/missing.md yet">' in body
    assert 'ops/missing.md</span> <span class="muted">(missing)</span>' in page


def test_a_note_shows_its_backlinks(alice, bob, operator):
    target = write(alice, "ops/deploy.md", "Deploy.", scope="shared")
    write(alice, "index.md", "[[ops/deploy]]", scope="shared")
    write(bob, "bob.md", "bob reads [[ops/deploy]]")

    page = operator.get(f"/console/notes/{target['id']}/").content.decode()

    backlinks = page[page.index('id="note-backlinks"') :]
    assert ">index.md</a>" in backlinks and ">bob.md</a>" in backlinks
    assert "acme/bob" in backlinks


def test_editing_saves_a_new_version_and_is_audited(alice, operator):
    note = write(alice, "a.md", "one", scope="shared")
    url = f"/console/notes/{note['id']}/edit/"
    assert 'name="version" value="1"' in operator.get(url).content.decode()

    response = operator.post(
        url, {"version": 1, "title": "A", "tags": "ops  urgent", "content": "two\r\nlines"}
    )

    assert response.status_code == 302 and response["Location"] == f"/console/notes/{note['id']}/"
    saved = Note.objects.get(pk=note["id"])
    assert (saved.version, saved.title, saved.tags) == (2, "A", ["ops", "urgent"])
    assert saved.content == "two\nlines"
    event = AuditEvent.objects.get(object_id=note["id"], action="note.update")
    assert event.actor == "user:operator" and event.before["content"] == "one"


def test_a_stale_edit_is_refused_and_the_operators_text_kept(alice, operator):
    note = write(alice, "a.md", "one", scope="shared")
    alice.patch(f"/api/v1/notes/{note['id']}", {"version": 1, "content": "agent's change"})

    response = operator.post(
        f"/console/notes/{note['id']}/edit/", {"version": 1, "content": "operator's change"}
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert "Note version is 2, not 1" in page and "operator&#x27;s change" in page
    assert 'name="version" value="2"' in page  # saving again now applies to version 2
    assert Note.objects.get(pk=note["id"]).content == "agent's change"


def test_a_bad_tag_is_shown_on_its_field(alice, operator):
    note = write(alice, "a.md", "one", scope="shared")

    response = operator.post(
        f"/console/notes/{note['id']}/edit/", {"version": 1, "tags": "ok b@d", "content": "x"}
    )

    assert response.status_code == 200
    assert "is not a tag" in response.content.decode()
    assert Note.objects.get(pk=note["id"]).version == 1


def test_a_deleted_note_sends_the_operator_back_to_the_tree(alice, operator):
    note = write(alice, "a.md", "one")
    alice.delete(f"/api/v1/notes/{note['id']}")

    response = operator.get(f"/console/notes/{note['id']}/", follow=True)

    assert response.redirect_chain[-1][0] == "/console/notes/"
    assert "No such note" in response.content.decode()


def test_a_context_links_each_of_its_notes_to_the_notes_page(alice, operator):
    note = write(alice, "ops/vpn.md", "VPN gateway runbook.")
    thread = alice.new_thread()
    given = alice.post(f"/api/v1/threads/{thread['id']}/context", {"query": "vpn gateway"}).json()

    page = operator.get(f"/console/contexts/{given['context_id']}/").content.decode()

    assert f'href="/console/notes/{note["id"]}/"' in page


@pytest.mark.parametrize("project", ["bogus", "0192f0a1-0000-7000-8000-000000000000"])
def test_an_unknown_project_is_a_400_naming_it(alice, operator, project):
    response = operator.get("/console/notes/", {"project": project})

    assert response.status_code == 400
    body = response.content.decode()
    assert f"project={project}: no such project; pick one from the list." in body
    assert "No projects yet" not in body
