"""The console's errors are threads.outcome's: badge, Errors filter, thread list, pairing."""

import re

import pytest

from apps.threads.models import Thread
from tests.threads.agent_loop_log import FAILURES, agent_loop_thread


@pytest.fixture
def operator(as_role):
    return as_role("operator")


def _timeline(operator, thread_id) -> str:
    response = operator.get(f"/console/threads/{thread_id}/")
    assert response.status_code == 200
    return response.content.decode()


def _item(content: str, seq: int) -> str:
    start = content.rindex('<li class="item', 0, content.index(f'id="m-{seq}"'))
    return content[start : content.index("</li>", start)]


def test_it_marks_every_failing_result_of_an_agent_loop_as_an_error(operator, alice):
    thread = agent_loop_thread(alice)

    content = _timeline(operator, thread["id"])

    items = re.findall(r'<li class="item[^"]*"', content)
    assert len(items) == 36 + 12  # every step and every message of the 84 is loaded
    # The Errors filter and "Next error" select exactly these items.
    assert sum("is-error" in item for item in items) == FAILURES
    assert content.count('<span class="badge error"') == FAILURES
    assert content.count('<span class="badge ok">ok</span>') == 36 - FAILURES
    assert 'title="content has status 502"' in content
    assert 'title="content has ok: false"' in content
    assert 'title="text starts &#x27;Error: refund window closed' in content


def test_the_thread_list_counts_every_failing_result_of_an_agent_loop(operator, alice):
    agent_loop_thread(alice, title="loop")

    body = operator.get("/console/threads/").content.decode()

    row = body[body.index(">loop</a>") : body.index("</tr>", body.index(">loop</a>"))]
    assert f'<td class="error-count"><span class="badge error">{FAILURES}</span></td>' in row


def test_an_error_result_pairs_with_its_call_by_tool_call_id(operator, alice):
    thread = alice.new_thread(title="Parallel refunds")
    alice.append(
        thread["id"],
        *[
            {"role": "assistant", "kind": "tool_call", "name": name, "payload": {"id": call}}
            for name, call in (("refund", "call_r"), ("notify", "call_n"))
        ],
        {
            "role": "tool",
            "kind": "error",
            "name": "refund",
            "content": "card declined",
            "payload": {"tool_call_id": "call_r"},
        },
        {
            "role": "tool",
            "kind": "tool_result",
            "name": "notify",
            "content": "sent",
            "payload": {"tool_call_id": "call_n"},
        },
    )

    content = _timeline(operator, Thread.objects.get(pk=thread["id"]).pk)

    refund, notify = _item(content, 1), _item(content, 2)
    assert 'id="m-3"' in refund and 'id="m-4"' in notify
    assert 'class="item step is-error' in refund and '<span class="badge error"' in refund
    assert '<span class="badge ok">ok</span>' in notify
    assert len(re.findall(r'<li class="item', content)) == 2
