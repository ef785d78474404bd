"""The operator's thread list: filters, full-text search over messages, pagination."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.threads.models import Thread

HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "thread-list"}


@pytest.fixture
def operator(as_role):
    return as_role("operator")


@pytest.fixture
def threads(alice, bob, carol):
    """Four threads across two projects, three agents, two resources and two channels."""
    made = {
        "billing": alice.new_thread(
            title="billing", resource_id="cust-1", channel="web", external_id="w1"
        ),
        "shipping": alice.new_thread(
            title="shipping", resource_id="cust-2", channel="email", external_id="e1"
        ),
        "bob-notes": bob.new_thread(title="bob-notes", resource_id="cust-1"),
        "globex": carol.new_thread(title="globex", channel="web", external_id="w2"),
    }
    alice.append(made["billing"]["id"], {"role": "user", "content": "The invoice was paid twice."})
    alice.append(made["shipping"]["id"], {"role": "user", "content": "Where is my parcel?"})
    carol.append(made["globex"]["id"], {"role": "user", "content": "Invoice copy, please."})
    old = timezone.now() - timedelta(days=10)
    Thread.objects.filter(title="shipping").update(created_at=old)
    return made


def _titles(response) -> list[str]:
    assert response.status_code == 200
    return sorted(thread.title for thread in response.context["page"])


@pytest.mark.parametrize(
    "params, expected",
    [
        ({}, ["billing", "bob-notes", "globex", "shipping"]),
        ({"project": "globex"}, ["globex"]),
        ({"agent": "bob"}, ["bob-notes"]),
        ({"resource": "cust-1"}, ["billing", "bob-notes"]),
        ({"channel": "web"}, ["billing", "globex"]),
        ({"channel": "web", "project": "acme"}, ["billing"]),
        ({"since": "today"}, ["billing", "bob-notes", "globex"]),
        ({"until": "yesterday"}, ["shipping"]),
        ({"since": "11 days ago", "until": "9 days ago"}, ["shipping"]),
    ],
)
def test_it_filters_threads(operator, threads, alice, bob, carol, params, expected):
    ids = {
        "acme": alice.agent.project_id,
        "globex": carol.agent.project_id,
        "bob": bob.agent.id,
    }
    days = {"today": 0, "yesterday": 1, "9 days ago": 9, "11 days ago": 11}
    query = {}
    for name, value in params.items():
        if name in ("since", "until"):
            value = (timezone.localdate() - timedelta(days=days[value])).isoformat()
        query[name] = ids.get(value, value)

    assert _titles(operator.get("/console/threads/", query)) == expected


def test_full_text_search_finds_threads_by_their_messages(operator, threads, alice):
    assert _titles(operator.get("/console/threads/", {"q": "invoice"})) == ["billing", "globex"]
    project = alice.agent.project_id
    assert _titles(operator.get("/console/threads/", {"q": "invoice", "project": project})) == [
        "billing"
    ]
    assert _titles(operator.get("/console/threads/", {"q": "parcel"})) == ["shipping"]
    assert _titles(operator.get("/console/threads/", {"q": "zeppelin"})) == []


@pytest.mark.parametrize(
    "params, says",
    [
        ({"since": "not a date", "channel": "email"}, "since=not a date: Enter a valid date."),
        ({"since": "2026-13-45"}, "since=2026-13-45: Enter a valid date."),
        ({"project": "nope"}, "project=nope: “nope” is not a valid UUID."),
        (
            {"agent": "01a22672-b3da-7074-a70d-9e91256a03f4"},
            "agent=01a22672-b3da-7074-a70d-9e91256a03f4: Select a valid choice. That choice is "
            "not one of the available choices.",
        ),
    ],
)
def test_an_invalid_filter_is_a_400_naming_it_and_lists_nothing(operator, threads, params, says):
    response = operator.get("/console/threads/", params)

    assert response.status_code == 400
    assert response.context["problems"] == [says]
    assert response.context["page"] is None  # not the threads the other filters alone match


def test_htmx_gets_only_the_list_fragment(operator, threads):
    response = operator.get("/console/threads/", {"channel": "email"}, **HTMX)

    content = response.content.decode()
    assert content.startswith('<section id="thread-list">')
    assert "shipping" in content and "billing" not in content
    assert "<form" not in content


def test_it_pages_threads_newest_activity_first_and_keeps_the_filters(operator, alice):
    for number in range(27):
        alice.new_thread(title=f"t{number:02}", channel="web", external_id=f"x{number}")
        alice.append(
            Thread.objects.get(title=f"t{number:02}").id, {"role": "user", "content": "hi"}
        )
    alice.new_thread(title="other channel")

    first = operator.get("/console/threads/", {"channel": "web"})
    second = operator.get("/console/threads/", {"channel": "web", "page": 2})

    assert [t.title for t in first.context["page"]][:2] == ["t26", "t25"]
    assert len(first.context["page"]) == 25
    assert [t.title for t in second.context["page"]] == ["t01", "t00"]
    assert 'href="?channel=web&amp;page=2"' in first.content.decode()
    assert "Page 1 of 2 (27)" in first.content.decode()


def test_each_thread_shows_its_open_waiting_and_failed_runs_errors_and_last_activity(
    operator, alice
):
    thread = alice.new_thread(title="loop")
    failed = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "a"}).json()
    alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "b"})  # left running
    waiting = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "c"}).json()
    alice.post(f"/api/v1/runs/{waiting['id']}/checkpoints", {"state": {}})  # waits for a human
    alice.post(f"/api/v1/runs/{failed['id']}/finish", {"status": "failed", "error": "boom"})
    alice.append(
        thread["id"],
        {"role": "tool", "kind": "tool_result", "name": "t", "payload": {"status": 503}},
        {"role": "tool", "kind": "tool_result", "name": "t", "payload": {"status": 200}},
        {"role": "tool", "kind": "tool_result", "name": "t", "payload": {"error": "timeout"}},
        {"role": "assistant", "kind": "error", "content": "gave up"},
        {"role": "assistant", "content": "an error? no, all fine"},
    )

    body = operator.get("/console/threads/").content.decode()

    row = body[body.index(">loop</a>") : body.index("</tr>", body.index(">loop</a>"))]
    assert '<span class="badge running">1 open</span>' in row
    assert ">1 waiting</span>" in row
    assert '<span class="badge failed">1 failed</span>' in row
    assert '<td class="error-count"><span class="badge error">3</span></td>' in row
    assert "ago</time>" in row


def test_a_search_shows_each_threads_matching_snippet_linked_to_the_hit(operator, alice):
    thread = alice.new_thread(title="long")
    alice.append(
        thread["id"],
        *[{"role": "user", "content": f"small talk {n}"} for n in range(5)],
        {"role": "user", "content": "words " * 60 + "the refund for invoice 4417 failed " * 2},
    )

    body = operator.get("/console/threads/", {"q": "refund"}).content.decode()

    hit = body[body.index('<div class="hit-snippet">') :]
    hit = hit[: hit.index("</div>")]
    assert f'href="/console/threads/{thread["id"]}/?seq=6#m-6">#6</a>' in hit
    assert "<mark>refund</mark> for invoice 4417" in hit
    assert hit.count("words") < 60 and "…" in hit  # the part around the hit, not the start


def test_a_snippet_shows_what_was_said_not_the_indexed_date(operator, alice):
    thread = alice.new_thread(title="dated")
    alice.append(
        thread["id"],
        {"role": "user", "content": "the parcel is late", "created_at": "2023-05-14T10:00:00Z"},
    )

    body = operator.get("/console/threads/", {"q": "Sunday parcel"}).content.decode()

    hit = body[body.index('<div class="hit-snippet">') :]
    hit = hit[: hit.index("</div>")]
    assert "<mark>parcel</mark> is late" in hit
    assert "May" not in hit and "Sunday" not in hit
