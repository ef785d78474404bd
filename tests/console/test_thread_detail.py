"""A thread's page: timeline with runs and tool calls, run state beside it, search, paging."""

import html
import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.runstate.services import checkpoint_create, iteration_append, snapshot_put
from apps.threads.models import Message, Run, Thread

HTMX = {"HTTP_HX_REQUEST": "true"}
DAY = timedelta(days=1)


@pytest.fixture
def operator(as_role):
    return as_role("operator")


@pytest.fixture
def conversation(alice):
    """A support thread: a run with a tool call and its result, a plan, run state."""
    thread = alice.new_thread(title="Billing", resource_id="cust-9")
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "turn 1"}).json()
    alice.append(
        thread["id"],
        {"role": "user", "content": "I was charged twice for invoice 4417.", "run_id": run["id"]},
        {
            "role": "assistant",
            "kind": "tool_call",
            "name": "lookup_invoice",
            "payload": {"invoice": 4417, "include": ["charges"]},
            "run_id": run["id"],
        },
        {"role": "tool", "kind": "tool_result", "name": "lookup_invoice", "content": "2 charges"},
        {"role": "assistant", "content": "Refunding the duplicate charge."},
    )
    thread_row, run_row = Thread.objects.get(pk=thread["id"]), Run.objects.get(pk=run["id"])
    iteration_append(
        thread=thread_row, run=run_row, task="refund", outcome="failed", error="gateway timeout"
    )
    iteration_append(
        thread=thread_row, task="refund", outcome="succeeded", summary="refund 88-1 issued"
    )
    checkpoint_create(run=run_row, state={"awaiting": "approval"}, reason="refund over limit")
    snapshot_put(run=run_row, tree={"agent": "orchestrator", "children": [{"agent": "billing"}]})
    return thread_row


def _page(operator, thread, **params) -> str:
    response = operator.get(f"/console/threads/{thread.id}/", params)
    assert response.status_code == 200
    return response.content.decode()


def _item(content: str, seq: int) -> str:
    """The timeline item (a message, or a tool step) holding message seq."""
    start = content.rindex('<li class="item', 0, content.index(f'id="m-{seq}"'))
    return content[start : content.index("</li>", start)]


def test_a_tool_call_and_its_result_are_one_step_folded_to_one_line(operator, conversation):
    content = _page(operator, conversation)

    step = _item(content, 2)
    assert 'id="m-3"' in step, "the result is not in its call's step"
    line = re.search(r'<summary class="step-line">(.*?)</summary>', step, re.S).group(1)
    assert "lookup_invoice" in line and '<span class="badge ok">ok</span>' in line
    assert re.search(r'class="latency"[^>]*>\d+ ms<', line)
    assert "2 charges" in line  # the result's first words
    assert "<details open" not in content  # folded until clicked


def test_payloads_are_indented_json_never_python_repr(operator, conversation):
    content = _page(operator, conversation)

    payload = re.search(r'<pre class="json"[^>]*>(.*?)</pre>', _item(content, 2), re.S).group(1)
    # Indented JSON (jsonb on PostgreSQL keeps its own key order).
    assert json.loads(html.unescape(payload)) == {"invoice": 4417, "include": ["charges"]}
    assert "{\n  &quot;" in payload and "[\n    &quot;charges&quot;\n  ]" in payload
    assert "&#x27;invoice&#x27;" not in content and "True" not in payload
    assert "data-copy" in _item(content, 2)


def test_results_pair_with_their_call_by_tool_call_id_even_when_interleaved(operator, alice):
    thread = alice.new_thread(title="Parallel tools")
    alice.append(
        thread["id"],
        *[
            {"role": "assistant", "kind": "tool_call", "name": name, "payload": {"id": name[0]}}
            for name in ("weather", "news")
        ],
        {"role": "tool", "kind": "tool_result", "name": "news", "payload": {"tool_call_id": "n"}},
        {
            "role": "tool",
            "kind": "tool_result",
            "name": "weather",
            "payload": {"tool_call_id": "w", "status": 503, "error": "upstream down"},
        },
    )
    content = _page(operator, Thread.objects.get(pk=thread["id"]))

    weather, news = _item(content, 1), _item(content, 2)
    assert 'id="m-4"' in weather and 'id="m-3"' in news
    assert 'class="item step is-error' in weather and "is-error" not in news.split(">")[0]


def test_each_message_shows_its_token_count(operator, conversation):
    content = _page(operator, conversation)

    for message in Message.objects.filter(thread=conversation):
        assert message.token_count > 0
        item = re.search(rf'id="m-{message.seq}">(.*?)</li>', content, re.S).group(1)
        assert f"<span>{message.token_count} tokens</span>" in item
    assert f"{conversation.token_count} tokens" in content


def test_the_run_band_opens_the_run_and_messages_outside_it_follow(operator, conversation):
    content = _page(operator, conversation)

    band = content.index('<li class="run-band run-suspended"')  # it waits at a checkpoint
    assert "Run turn 1" in content[band : content.index("</li>", band)]
    # The call (#2) is in the run; the step holding it and its result ends the run's rail.
    assert (
        band
        < content.index('id="m-1"')
        < content.index('<li class="run-end')
        < content.index('id="m-4"')
    )
    assert content.count('class="run-band') == 1


def test_a_failed_run_shows_its_error_duration_and_end(operator, alice):
    thread = alice.new_thread(title="Failing")
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "fetch"}).json()
    alice.append(thread["id"], {"role": "user", "content": "go", "run_id": run["id"]})
    finished = alice.post(
        f"/api/v1/runs/{run['id']}/finish", {"status": "failed", "error": "quota exhausted (429)"}
    )
    assert finished.status_code == 200, finished.content
    content = _page(operator, Thread.objects.get(pk=thread["id"]))

    band = content[content.index('<li class="run-band run-failed"') :]
    assert '<div class="run-error" role="note">quota exhausted (429)</div>' in band
    assert re.search(r"after \d+\.\d s", band)
    sidebar = content[content.index('id="thread-runs"') :]
    assert f'href="?seq=1#run-{run["id"]}"' in sidebar and "quota exhausted (429)" in sidebar


def test_a_run_is_never_repeated_where_pages_meet(operator, alice):
    thread = alice.new_thread(title="Long run")
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "long"}).json()
    alice.append(
        thread["id"],
        *[{"role": "user", "content": f"line {n}", "run_id": run["id"]} for n in range(1, 151)],
    )
    row = Thread.objects.get(pk=thread["id"])
    content = _page(operator, row)
    earlier = operator.get(f"/console/threads/{row.id}/earlier/?before=51", **HTMX)

    assert "run-band" not in content and content.count('<li class="run-end') == 1
    assert earlier.content.decode().count('<li class="run-band') == 1


def test_it_shows_the_iteration_log_checkpoints_and_run_snapshots(operator, conversation):
    content = _page(operator, conversation)
    aside = content[content.index("<aside") :]

    log = aside[aside.index("<h2>Iteration log</h2>") : aside.index("<h2>Runs</h2>")]
    assert re.search(r'refund #2 <span class="badge succeeded">succeeded</span>', log)
    assert "refund 88-1 issued" in log
    assert re.search(
        r'refund #1 <span class="badge failed">failed</span>.*gateway timeout', log, re.S
    )
    assert log.index("refund #2") < log.index("refund #1")  # newest attempt first
    checkpoints = aside[aside.index("<h2>Checkpoints</h2>") : aside.index("<h2>Run snapshots</h2>")]
    assert (
        "refund over limit" in checkpoints
        and "&quot;awaiting&quot;: &quot;approval&quot;" in checkpoints
    )
    snapshots = aside[aside.index("<h2>Run snapshots</h2>") :]
    assert "turn 1 v1" in snapshots and "&quot;agent&quot;: &quot;orchestrator&quot;" in snapshots


def test_observations_and_summaries_have_their_place_above_the_timeline(operator, conversation):
    content = _page(operator, conversation)

    place = content.index('id="observations"')
    assert (
        content.index("<h2>Observations and summaries</h2>")
        < place
        < content.index("<h2>Timeline</h2>")
    )


def test_the_in_thread_search_shows_each_hit_with_its_context_range(operator, alice):
    thread = alice.new_thread(title="Long")
    # A day apart, the fillers before and after the hit are of other sessions than its own, so
    # none is lifted into a hit of its own (search's conversations): they show in its range.
    start = timezone.now() - timedelta(days=3)

    def said(day: int, text: str, role: str = "user") -> dict:
        return {"role": role, "content": text, "created_at": (start + day * DAY).isoformat()}

    alice.append(
        thread["id"],
        *[said(0, f"filler line {n}") for n in range(1, 6)],
        said(1, "The router model is XR-500."),
        *[said(2, f"more filler {n}", "assistant") for n in range(7, 10)],
    )

    response = operator.post(
        f"/console/threads/{thread['id']}/search/", {"q": "router XR-500"}, **HTMX
    )

    content = response.content.decode()
    assert content.startswith('<section id="thread-search-results">')
    card = re.search(r'<div class="card">(.*?)<div class="signals">score', content, re.S).group(1)
    # The default range is 2 messages before and 1 after the hit (#6).
    assert "messages #4–#7" in card
    assert re.findall(r"#(\d+)(?:</strong></a>)? (?:user|assistant):", card) == ["4", "5", "6", "7"]
    assert '<a href="?seq=6#m-6"><strong>#6</strong></a>' in card
    assert "<mark>The router model is XR-500.</mark>" in card
    assert "lexical rank 1" in content


def test_an_empty_search_answers_with_an_empty_fragment(operator, conversation):
    response = operator.post(f"/console/threads/{conversation.id}/search/", {"q": "  "}, **HTMX)

    fragment = response.content.decode().split('<div id="messages"')[0]
    assert re.fullmatch(r'<section id="thread-search-results">\s*</section>\s*', fragment)


@pytest.fixture
def long_thread(alice):
    thread = alice.new_thread(title="Long")
    alice.append(thread["id"], *[{"role": "user", "content": f"line {n}"} for n in range(1, 251)])
    return Thread.objects.get(pk=thread["id"])


def _seqs(content: str) -> list[int]:
    return [int(seq) for seq in re.findall(r'<div class="msg[^"]*" id="m-(\d+)"', content)]


def _button(content: str, name: str) -> str | None:
    match = re.search(rf'hx-get="(/console/threads/[^"]+/{name}/\?[^"]+)"', content)
    return match.group(1) if match else None


def test_a_link_to_one_message_opens_a_window_around_it_with_both_ways_to_page(
    operator, long_thread
):
    content = _page(operator, long_thread, seq=120)

    assert _seqs(content) == list(range(70, 170))
    assert _button(content, "earlier").endswith("?before=70")
    later = _button(content, "later")
    assert later.endswith("?after=169")
    fragment = operator.get(later, **HTMX).content.decode()
    assert _seqs(fragment) == list(range(170, 251))
    assert _button(fragment, "later") is None  # that was the newest message
    assert fragment.index('id="m-250"') < fragment.index('<div id="load-later">')


def test_later_pages_chain_until_the_newest_message(operator, long_thread):
    content = _page(operator, long_thread, seq=3)

    assert _seqs(content) == list(range(1, 101))
    assert _button(content, "earlier") is None
    fragment = operator.get(_button(content, "later"), **HTMX).content.decode()
    assert _seqs(fragment) == list(range(101, 201))
    assert _button(fragment, "later").endswith("?after=200")


def test_the_newest_page_offers_no_later_messages(operator, long_thread):
    content = _page(operator, long_thread)

    assert _seqs(content) == list(range(151, 251))
    assert _button(content, "later") is None
    assert 'class="msg user highlight"' not in content


def test_the_linked_message_is_highlighted(operator, long_thread):
    content = _page(operator, long_thread, seq=120)

    assert re.findall(
        r'<div class="msg[^"]*highlight" id="m-(\d+)" aria-current="true">', content
    ) == ["120"]


@pytest.mark.parametrize("seq", ["0", "999", "abc"])
def test_a_link_to_a_missing_message_opens_the_newest_page(operator, long_thread, seq):
    content = _page(operator, long_thread, seq=seq)

    assert _seqs(content) == list(range(151, 251))
    assert "highlight" not in re.findall(r'<div class="(msg[^"]*)"', content)[0]


@pytest.fixture
def tool_thread(alice):
    """250 messages: a user turn, a call and its result, over and over; every 5th call has
    no result (the agent gave up on it). Eight short turns first put such a call at #150, right
    before the newest page."""
    thread = alice.new_thread(title="Tools")
    messages = [{"role": "user", "content": f"hello {n}"} for n in range(8)]
    for turn in range(90):
        messages.append({"role": "user", "content": f"turn {turn}"})
        call = {
            "role": "assistant",
            "kind": "tool_call",
            "name": "t",
            "payload": {"id": f"c{turn}"},
        }
        messages.append(call)
        if turn % 5:
            result = {"tool_call_id": f"c{turn}"}
            messages.append({"role": "tool", "kind": "tool_result", "name": "t", "payload": result})
    alice.append(thread["id"], *messages[:250])
    return Thread.objects.get(pk=thread["id"])


def _pages_from(operator, thread, content: str, name: str) -> list[str]:
    pages = []
    while (url := _button(content, name)) is not None:
        content = operator.get(url, **HTMX).content.decode()
        pages.append(content)
    return pages


@pytest.mark.parametrize("seq", [None, 1, 120, 200])
def test_paging_both_ways_shows_each_message_once_and_never_splits_a_step(
    operator, tool_thread, seq
):
    first = _page(operator, tool_thread, **({} if seq is None else {"seq": seq}))
    pages = [
        *_pages_from(operator, tool_thread, first, "earlier"),
        first,
        *_pages_from(operator, tool_thread, first, "later"),
    ]

    seqs = sorted(s for page in pages for s in _seqs(page))
    assert seqs == list(range(1, 251))
    calls = Message.objects.filter(thread=tool_thread, kind="tool_call")
    for call in calls:
        result = Message.objects.filter(
            thread=tool_thread, payload__tool_call_id=call.payload["id"]
        )
        if result.exists():
            holder = next(page for page in pages if f'id="m-{call.seq}"' in page)
            assert f'id="m-{result.get().seq}"' in _item(holder, call.seq), call.seq
