"""What the agent saw: a context's blocks, items linked to their sources, and the diff."""

import html
import json
import re

import pytest

from apps.episodic.models import MemoryEntry
from apps.jobs.services import job_run_pending
from apps.knowledge.services import document_from_text, knowledge_base_create
from apps.memconfig.services import config_update
from apps.observations.models import Observation

SCRIPT = "<script>alert('x')</script>"


@pytest.fixture
def operator(as_role):
    return as_role("operator")


def configure(actor, **changes):
    config_update(agent=actor.agent, changes=changes, changed_by="test")


def _context(actor, thread_id, **body) -> dict:
    response = actor.post(f"/api/v1/threads/{thread_id}/context", body)
    assert response.status_code == 200, response.content
    return response.json()


def _remember(actor, content) -> dict:
    response = actor.post("/api/v1/episodic", {"content": content, "resource_id": "ann"})
    assert response.status_code == 201, response.content
    job_run_pending()
    return response.json()


def _page(client, context_id) -> str:
    response = client.get(f"/console/contexts/{context_id}/")
    assert response.status_code == 200
    return response.content.decode()


def _block(content: str, name: str) -> str:
    match = re.search(
        rf'<section class="card context-block[^"]*" id="block-{name}">(.*?)</section>',
        content,
        re.S,
    )
    assert match, f"no block {name}"
    return match.group(1)


@pytest.fixture
def boiler(alice):
    """A thread about a boiler, with an entry and a knowledge chunk that match it."""
    configure(alice, episodic_approval_required=False, recent_window=3)
    entry = _remember(alice, "Ann's boiler was serviced in May")
    kb = knowledge_base_create(project=alice.agent.project, slug="ops", name="Ops")
    document = document_from_text(
        kb=kb, title="Boiler runbook", text="Bleed the boiler radiators first.", actor="test"
    ).document
    job_run_pending()
    thread = alice.new_thread(title="Boiler", resource_id="ann")
    alice.append(
        thread["id"],
        {"role": "user", "content": f"The boiler is cold again {SCRIPT}"},
        {"role": "assistant", "content": "Since when?"},
    )
    return {"thread": thread, "entry": entry, "document": document}


def test_it_shows_the_query_budget_and_each_block_with_its_tokens_and_text(operator, alice, boiler):
    given = _context(alice, boiler["thread"]["id"], query="boiler radiators", max_tokens=4000)

    content = _page(operator, given["context_id"])

    assert "<h1>What the agent saw</h1>" in content
    assert "<q>boiler radiators</q>" in content
    assert f"{given['tokens']:,} of a 4,000 token budget" in content
    for answered in given["blocks"]:  # what each block was given and used
        assert (
            f"Used {answered['tokens']:,} of {answered['granted_tokens']:,} tokens granted "
            f"({answered['planned_tokens']:,} planned"
        ) in _block(content, answered["name"])
    assert f"<code>{given['config_version']}</code>" in content
    for block in given["blocks"]:
        section = _block(content, block["name"])
        assert f'<h2>{block["name"]} <span class="muted">· {block["tokens"]:,} tokens' in section
    memory = _block(content, "memory")
    assert "Ann&#x27;s boiler was serviced in May" in memory
    assert "Bleed the boiler radiators first." in _block(content, "knowledge")
    recent = _block(content, "recent")
    assert "#2 assistant: Since when?" in recent


def test_each_item_links_to_its_source(operator, alice, boiler):
    thread_id = boiler["thread"]["id"]
    given = _context(alice, thread_id, query="boiler radiators")

    content = _page(operator, given["context_id"])

    entry = boiler["entry"]["id"]
    assert f'<a href="/console/moderation/{entry}/">entry' in _block(content, "memory")
    document = boiler["document"].id
    assert f'<a href="/console/knowledge/documents/{document}/">chunk' in _block(
        content, "knowledge"
    )
    recent = _block(content, "recent")
    for seq in (1, 2):
        assert (
            f'<a href="/console/threads/{thread_id}/?seq={seq}#m-{seq}">message #{seq}</a>'
            in recent
        )


def test_an_observation_links_to_its_band_on_the_thread_page(operator, alice):
    configure(alice, observer_message_tokens=200, recent_window=2)
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        *[
            {"role": "user", "content": f"Note {n}: order {n}00 " + "word " * 30}
            for n in range(1, 11)
        ],
    )
    job_run_pending()
    given = _context(alice, thread["id"])

    content = _page(operator, given["context_id"])

    block = _block(content, "observations")
    for row in Observation.objects.filter(thread_id=thread["id"], superseded_by__isnull=True):
        url = f"/console/threads/{thread['id']}/?seq={row.first_seq}#obs-{row.id}"
        assert f'<a href="{url}">observation #{row.first_seq}</a>' in block
        band = operator.get(url).content.decode()
        assert f'id="obs-{row.id}"' in band
    assert "User: Note 1: order 100" in block


def test_stored_text_is_escaped(operator, alice, boiler):
    given = _context(alice, boiler["thread"]["id"], query="boiler")

    content = _page(operator, given["context_id"])

    assert "The boiler is cold again &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in content
    assert "<script>alert" not in content


def test_items_changed_or_deleted_since_are_flagged(operator, alice, boiler):
    kept = _remember(alice, "Ann's boiler pressure is low")
    given = _context(alice, boiler["thread"]["id"], query="boiler")
    MemoryEntry.objects.filter(pk=boiler["entry"]["id"]).update(content="Ann's boiler was replaced")
    assert alice.delete(f"/api/v1/episodic/{kept['id']}").status_code in (200, 204)

    memory = _block(_page(operator, given["context_id"]), "memory")

    items = dict(
        re.findall(r'<a href="/console/moderation/([^/]+)/">entry[^<]*</a>(.*?)</li>', memory, re.S)
    )
    assert "changed since" in items[boiler["entry"]["id"]]
    assert "deleted since" in items[kept["id"]]
    assert "Ann&#x27;s boiler was replaced" in memory and "pressure is low" not in memory


def test_it_compares_the_context_with_the_previous_one_of_its_thread(operator, alice, boiler):
    configure(alice, context_strategy="none")  # only the window of 3 recent messages
    thread_id = boiler["thread"]["id"]
    first = _context(alice, thread_id, query="boiler")
    alice.append(thread_id, {"role": "user", "content": "Since Monday."})
    alice.append(thread_id, {"role": "assistant", "content": "Bleed the radiators."})
    entry = boiler["entry"]["id"]
    MemoryEntry.objects.filter(pk=entry).update(content="Ann's boiler was serviced in June")
    second = _context(alice, thread_id, query="boiler")

    opening = _page(operator, first["context_id"])
    diff = _page(operator, second["context_id"])

    assert "This is the thread's first context" in opening
    panel = diff[diff.index('id="context-diff"') :]
    assert f'<a href="/console/contexts/{first["context_id"]}/">the previous context</a>' in panel
    # Per block first: items and tokens before and after; then the item lines on demand.
    recent_delta = re.search(r'<tr id="delta-recent">(.*?)</tr>', panel, re.S).group(1)
    assert "2 → 3" in recent_delta and "(+1)" in recent_delta  # #1, #2 then #2, #3, #4
    recent = _diff_block(panel, "recent")
    assert "recent: 2 entered, 1 left, 0 changed" in recent
    entered = recent[recent.index("<h3>Entered</h3>") : recent.index("<h3>Left</h3>")]
    assert re.findall(r"<a [^>]*>message #(\d+)</a>", entered) == ["3", "4"]
    assert re.findall(r"<a [^>]*>message #(\d+)</a>", recent.split("<h3>Left</h3>")[1]) == ["1"]
    memory = _diff_block(panel, "memory")
    assert "<h3>Changed</h3>" in memory
    assert f'<a href="/console/moderation/{entry}/">entry' in memory


def _diff_block(panel: str, name: str) -> str:
    """The <details id="diff-<name>"> of the comparison, up to the next block's."""
    start = panel.index(f'id="diff-{name}"')
    end = panel.find('id="diff-', start + 1)
    return panel[start : end if end > 0 else None]


def test_warnings_are_shown(operator, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], *[{"role": "user", "content": "word " * 60} for _ in range(6)])
    given = _context(alice, thread["id"], max_tokens=200)
    assert given["warnings"], "the budget should have trimmed the recent messages"

    content = _page(operator, given["context_id"])

    warnings = content[content.index('class="card context-warnings"') :]
    assert "<code>trimmed</code> · recent:" in warnings


def test_it_draws_each_blocks_tokens_against_its_planned_share(operator, alice, boiler):
    given = _context(alice, boiler["thread"]["id"], query="boiler radiators", max_tokens=4000)

    content = _page(operator, given["context_id"])

    bar = content[content.index('<svg class="budget-bar"') : content.index("</svg>")]
    used = re.findall(r'class="budget-used block-(\w+)" x="([\d.]+)" y="0" width="([\d.]+)"', bar)
    shown = [b for b in given["blocks"] if b["tokens"]]
    assert [name for name, _, _ in used] == [b["name"] for b in shown]
    for (_, _, width), answered in zip(used, shown, strict=True):
        assert float(width) == round(answered["tokens"] * 1000 / 4000, 1)
    planned = re.findall(r'class="budget-planned block-(\w+)"', bar)
    assert planned == [b["name"] for b in given["blocks"] if b["planned_tokens"]]


def test_it_shows_exactly_the_system_prompt_and_messages_sent(operator, alice, boiler):
    given = _context(alice, boiler["thread"]["id"], query="boiler radiators")

    content = _page(operator, given["context_id"])

    prompt = re.search(r'<pre id="sent-system-prompt" tabindex="0">(.*?)</pre>', content, re.S)
    assert html.unescape(prompt.group(1)) == given["system_prompt"]
    messages = re.search(r'<pre id="sent-messages" tabindex="0">(.*?)</pre>', content, re.S)
    assert json.loads(html.unescape(messages.group(1))) == given["messages"]
    assert SCRIPT not in content  # the user's text is escaped on the page


def test_it_says_when_the_query_was_the_latest_user_message(operator, alice, boiler):
    given = _context(alice, boiler["thread"]["id"])

    content = _page(operator, given["context_id"])

    assert "<q>The boiler is cold again" in content
    assert "the thread's latest user message" in content


def test_an_unknown_context_is_404(operator):
    response = operator.get("/console/contexts/01a20000-0000-7000-8000-000000000000/")

    assert response.status_code == 404


def test_another_projects_context_is_open_to_operators(as_role, carol):
    thread = carol.new_thread()
    carol.append(thread["id"], {"role": "user", "content": "hello"})
    given = _context(carol, thread["id"])

    assert as_role("operator").get(f"/console/contexts/{given['context_id']}/").status_code == 200


@pytest.mark.parametrize("role", ["curator", "moderator", None])
def test_the_pages_need_the_operator_role(as_role, alice, role):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "hello"})
    given = _context(alice, thread["id"])
    client = as_role(role) if role else as_role()

    for url in (
        f"/console/contexts/{given['context_id']}/",
        f"/console/threads/{thread['id']}/contexts/",
    ):
        assert client.get(url).status_code == 403


def test_anonymous_users_are_sent_to_the_login_page(client, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "hello"})
    url = f"/console/contexts/{_context(alice, thread['id'])['context_id']}/"

    response = client.get(url)

    assert response.status_code == 302 and response["Location"].startswith("/console/login/")


def test_a_context_whose_items_changed_since_says_its_text_is_today_s(operator, alice, boiler):
    given = _context(alice, boiler["thread"]["id"], query="boiler", max_tokens=4000)
    untouched = _page(operator, given["context_id"])
    longer = "Ann's boiler was serviced in May and its pressure valve was replaced in June"
    MemoryEntry.objects.filter(pk=boiler["entry"]["id"]).update(content=longer)

    content = _page(operator, given["context_id"])

    assert "Exactly what was sent" in untouched and "since this context was given" not in untouched
    assert "Exactly what was sent" not in content
    assert "1 item changed or went since this context was given: its text below is today" in (
        html.unescape(content)
    )
    # The budget says what each block used when it was given, never more than it was granted.
    table = content[content.index('<table class="budget-table">') :]
    rows = re.findall(r"</span> (\w+)</th><td>(\d+)</td><td>(\d+|—)</td>", table)
    used = {name: int(tokens) for name, tokens, _ in rows}
    assert used["memory"] == next(b["tokens"] for b in given["blocks"] if b["name"] == "memory")
    assert all(granted == "—" or int(tokens) <= int(granted) for _, tokens, granted in rows)
