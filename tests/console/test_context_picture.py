"""What the agent saw as a picture: blocks collapsed to ranges, what the budget cut, and any two
contexts of a thread compared block by block."""

import re

import pytest
from django.utils import timezone
from django.utils.html import escape

from apps.context.left_out import left_out_pieces
from apps.context.models import ContextSnapshot
from apps.context.render import block_tokens
from apps.context.snapshots import message_piece, snapshot_store
from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.threads.models import Message, Thread


@pytest.fixture
def operator(as_role):
    return as_role("operator")


def configure(actor, **changes):
    config_update(agent=actor.agent, changes=changes, changed_by="test")


def given(actor, thread_id, **body) -> dict:
    response = actor.post(f"/api/v1/threads/{thread_id}/context", body)
    assert response.status_code == 200, response.content
    return response.json()


def block(page: str, name: str) -> str:
    match = re.search(
        rf'<section class="card context-block[^"]*" id="block-{name}">(.*?)</section>', page, re.S
    )
    assert match, f"no block {name}"
    return match.group(1)


def summaries(section: str) -> list[str]:
    """The ranges a block shows, as their <summary> text without the markup."""
    found = re.findall(r'<details class="context-range[^"]*">\s*<summary>(.*?)</summary>', section)
    return [re.sub(r"<[^>]+>", "", text) for text in found]


def outside_details(section: str) -> str:
    return re.sub(r"<details.*?</details>", "", section, flags=re.S)


def test_a_long_recent_window_is_one_range_with_its_items_on_demand(operator, alice):
    configure(alice, context_strategy="none", recent_window=300)
    thread = alice.new_thread()
    alice.append(thread["id"], *[{"role": "user", "content": f"Step {n}"} for n in range(1, 61)])

    page = operator.get(f"/console/contexts/{given(alice, thread['id'])['context_id']}/")
    recent = block(page.content.decode(), "recent")

    assert summaries(recent) == ["#1–#60 recent · 60 items"]
    assert recent.count(">message #") == 60  # all there, inside the closed range
    assert "message #" not in outside_details(recent)


def test_observations_show_as_the_messages_they_cover(operator, alice):
    configure(alice, observer_message_tokens=200, recent_window=2)
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        *[{"role": "user", "content": f"Note {n}: " + "word " * 30} for n in range(1, 11)],
    )
    job_run_pending()

    page = operator.get(f"/console/contexts/{given(alice, thread['id'])['context_id']}/")
    content = page.content.decode()

    [observed] = summaries(block(content, "observations"))
    assert re.fullmatch(r"messages #1–#\d+ \(observed\) · \d+ items?", observed), observed
    last = int(re.search(r"#1–#(\d+)", observed).group(1))
    assert summaries(block(content, "recent"))[0].startswith(f"#{last + 1}–#10 recent")


def test_recalled_messages_show_as_stretches(operator, alice):
    # Two recalled matches: not the turns of their session they lift (search's conversations).
    configure(
        alice,
        context_strategy="none",
        recent_window=2,
        semantic_recall_top_k=2,
        semantic_recall_range_after=0,
    )
    thread = alice.new_thread()
    words = [{"role": "user", "content": f"Filler message number {n}"} for n in range(1, 31)]
    words[9] = {"role": "user", "content": "The boiler in the cellar leaks"}
    words[19] = {"role": "user", "content": "The boiler pressure dropped"}
    alice.append(thread["id"], *words)

    context = given(alice, thread["id"], query="boiler")
    recall = block(
        operator.get(f"/console/contexts/{context['context_id']}/").content.decode(), "recall"
    )

    ranges = summaries(recall)
    assert any(text.startswith("#8–#10 recalled") for text in ranges), ranges
    assert any(text.startswith("#18–#20 recalled") for text in ranges), ranges


def test_what_the_budget_cut_is_listed_item_by_item(operator, alice):
    """The snapshot records the candidates each block could not hold (left_out_pieces)."""
    thread = alice.new_thread()
    alice.append(thread["id"], *[{"role": "user", "content": f"Message {n}"} for n in range(1, 9)])
    row = Thread.objects.get(pk=thread["id"])
    now = timezone.now()
    read = Message.objects.filter(thread=row, seq__gt=2)  # #1 and #2 did not fit max_tokens
    candidates = {"recent": [message_piece(m) for m in read]}
    block_tokens("recent", candidates["recent"], now)  # as the assembly counts every candidate
    kept = {"recent": candidates["recent"][-3:]}
    answer = snapshot_store(
        agent=alice.agent,
        thread=row,
        query="",
        query_source="none",
        max_tokens=100,
        config_version="test",
        assembled_at=now,
        blocks=kept,
        warnings=[
            {"code": "trimmed", "block": "recent", "message": "5 item(s) of recent left out"}
        ],
        budget={},
        # As context_assemble hands it over: 2 older messages were never read.
        left_out=left_out_pieces(candidates=candidates, recall=[], kept=kept, unread_messages=2),
    )

    page = operator.get(f"/console/contexts/{answer['context_id']}/").content.decode()
    recent = block(page, "recent")

    cut = recent[recent.index('id="left-out-recent"') :]
    assert "Left out by the budget: 5 items" in cut
    assert "#1–#2, older messages never read — " in cut
    assert f'<a href="/console/threads/{thread["id"]}/?seq=1#m-1">' in cut
    tokens = sum(p.tokens for p in candidates["recent"][:3])
    assert summaries(cut) == [f"#3–#5 · 3 items · {tokens} tokens"]
    assert re.findall(r">message #(\d+)</a>", cut) == ["3", "4", "5"]
    assert summaries(recent.split('id="left-out-recent"')[0]) == ["#6–#8 recent · 3 items"]


def test_a_context_that_did_not_record_its_cuts_says_what_its_warning_said(operator, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], *[{"role": "user", "content": "word " * 60} for _ in range(6)])
    context = given(alice, thread["id"], max_tokens=200)
    snapshot = ContextSnapshot.objects.get(pk=context["context_id"])
    snapshot.manifest.pop("left_out", None)  # as contexts stored before it was recorded
    snapshot.save(update_fields=["manifest"])

    page = operator.get(f"/console/contexts/{context['context_id']}/").content.decode()
    cut = block(page, "recent").split('id="left-out-recent"')[1]

    [warning] = [w for w in context["warnings"] if w.get("block") == "recent"]
    assert escape(warning["message"]) in cut
    assert "stored before contexts recorded which items were cut" in cut


@pytest.fixture
def three_contexts(alice):
    configure(alice, context_strategy="none", recent_window=3)
    thread = alice.new_thread()
    ids = []
    for n in range(3):
        alice.append(thread["id"], {"role": "user", "content": f"Turn {n} " + "word " * 10 * n})
        ids.append(given(alice, thread["id"])["context_id"])
    return thread, ids


def test_any_two_contexts_are_compared_as_picked(operator, three_contexts):
    thread, (first, second, third) = three_contexts
    listing = operator.get(f"/console/threads/{thread['id']}/contexts/").content.decode()
    assert listing.count('<select name="a">') == 1 and listing.count('<select name="b">') == 1

    picked = operator.get(
        f"/console/threads/{thread['id']}/contexts/compare/", {"a": first, "b": third}
    )

    assert picked.status_code == 302
    assert picked["Location"] == f"/console/contexts/{third}/?against={first}#context-diff"
    page = operator.get(f"/console/contexts/{third}/", {"against": first}).content.decode()
    panel = page[page.index('id="context-diff"') :]
    assert f'<a href="/console/contexts/{first}/">the context</a>' in panel
    assert re.search(rf'<option value="{first}" selected>', panel)
    assert re.search(rf'<option value="{third}" selected>', panel)
    delta = re.search(r'<tr id="delta-recent">(.*?)</tr>', panel, re.S).group(1)
    assert "1 → 3" in delta and "(+2)" in delta
    assert "recent: 2 entered, 0 left, 0 changed" in panel


@pytest.mark.parametrize(
    "against, says",
    [
        ("not-a-context", "is not a context of this thread"),
        ("01a20000-0000-7000-8000-000000000000", "is not a context of this thread"),
        ("itself", "against: that is this context; pick another one to compare."),
    ],
)
def test_a_bad_against_is_told_and_the_previous_context_is_used(
    operator, three_contexts, against, says
):
    _, (first, second, third) = three_contexts
    against = third if against == "itself" else against

    page = operator.get(f"/console/contexts/{third}/", {"against": against}).content.decode()

    assert says in page
    assert f'<a href="/console/contexts/{second}/">the previous context</a>' in page


def test_a_bad_pick_is_told_with_a_400(operator, three_contexts, carol):
    thread, (first, _, _) = three_contexts
    other = carol.new_thread()
    carol.append(other["id"], {"role": "user", "content": "hi"})
    elsewhere = given(carol, other["id"])["context_id"]

    response = operator.get(
        f"/console/threads/{thread['id']}/contexts/compare/", {"a": first, "b": elsewhere}
    )

    assert response.status_code == 400
    assert "a, b: pick two different contexts of this thread" in response.content.decode()
    same = operator.get(
        f"/console/threads/{thread['id']}/contexts/compare/", {"a": first, "b": first}
    )
    assert same.status_code == 400
