"""A thread's memory on its page: observation and summary bands, gauges, failures, contexts."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.observations.models import Observation, ObservationFailure, ThreadSummary
from apps.threads.models import Thread

HTMX = {"HTTP_HX_REQUEST": "true"}
SCRIPT = "<script>alert('x')</script>"


@pytest.fixture
def operator(as_role):
    return as_role("operator")


def configure(actor, **changes):
    config_update(agent=actor.agent, changes=changes, changed_by="test")


def ticket(n: int) -> dict:
    """A user message of about 30 tokens."""
    return {"role": "user", "content": f"Ticket {n}: router XR-{n} reboots {SCRIPT} " + "ok " * 15}


@pytest.fixture
def observed(alice):
    """A thread of 12 messages whose first ones the extractive observer has observed."""
    configure(alice, observer_message_tokens=200, reflector_observation_tokens=100_000)
    configure(alice, recent_window=2)
    thread = alice.new_thread(title="Router")
    alice.append(thread["id"], *[ticket(n) for n in range(1, 13)])
    job_run_pending()
    return Thread.objects.get(pk=thread["id"])


def _page(client, thread, **params) -> str:
    response = client.get(f"/console/threads/{thread.id}/", params)
    assert response.status_code == 200
    return response.content.decode()


def _band(content: str, observation) -> str:
    match = re.search(
        rf'<details class="memory-band (\w+)" id="obs-{observation.id}">(.*?)</details>',
        content,
        re.S,
    )
    assert match, f"no band for {observation}"
    return match.group(2)


def _seqs(content: str) -> list[int]:
    return [int(seq) for seq in re.findall(r'<div class="msg[^"]*" id="m-(\d+)"', content)]


def test_each_observation_is_a_band_before_the_first_message_it_covers(operator, observed):
    content = _page(operator, observed)

    active = list(Observation.objects.filter(thread=observed).order_by("first_seq"))
    assert len(active) >= 2 and active[-1].last_seq == 10  # the last 2 messages are the window
    for row in active:
        band = _band(content, row)
        summary = f"observed #{row.first_seq}–#{row.last_seq}, {row.message_tokens} → {row.tokens}"
        assert f"<strong>{summary} tokens</strong>" in band
        assert f"generation {row.generation} · extractive" in band
        place = content.index(f'id="obs-{row.id}"')
        assert place < content.index(f'id="m-{row.first_seq}"')
        if row.first_seq > 1:
            assert content.index(f'id="m-{row.first_seq - 1}"') < place
    assert "<details open" not in content
    overview = content[content.index('id="observations"') : content.index("<h2>Timeline</h2>")]
    assert f"{len(active)} active observations stand for messages #1–#10." in overview


def test_band_and_message_text_is_escaped(operator, observed):
    content = _page(operator, observed)

    row = Observation.objects.filter(thread=observed).first()
    band = _band(content, row)
    text = re.search(r'<pre class="memory-text"[^>]*>(.*?)</pre>', band, re.S).group(1)
    assert "router XR-1 reboots &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in text
    assert SCRIPT not in content and "<script>alert" not in content


def test_a_reflection_band_lists_the_observations_it_replaced(operator, alice):
    configure(alice, observer_message_tokens=200, reflector_observation_tokens=100)
    configure(alice, recent_window=2)
    thread = alice.new_thread()
    for start in (1, 7, 13):
        alice.append(thread["id"], *[ticket(n) for n in range(start, start + 6)])
        job_run_pending()

    content = _page(operator, Thread.objects.get(pk=thread["id"]))

    reflection = Observation.objects.get(thread_id=thread["id"], superseded_by__isnull=True)
    assert reflection.is_reflection and reflection.first_seq == 1
    band = content[content.index(f'id="obs-{reflection.id}"') :]
    assert band.startswith(f'id="obs-{reflection.id}">')
    assert f"reflection · generation {reflection.generation}" in band
    sources = list(reflection.supersedes.order_by("first_seq"))
    assert len(sources) >= 2
    for source in sources:
        assert re.search(
            rf'<details class="memory-source" id="obs-{source.id}">\s*<summary>observed '
            rf"#{source.first_seq}–#{source.last_seq}, {source.message_tokens} → {source.tokens}",
            band,
        )
    assert content.count('class="memory-band') == 1  # superseded rows are no bands of their own


def test_the_gauges_show_the_configured_thresholds(operator, observed):
    content = _page(operator, observed)
    gauges = content[content.index('id="memory-gauges"') : content.index('id="memory-failures"')]

    active = Observation.objects.filter(thread=observed, superseded_by__isnull=True)
    unobserved = observed.token_count - sum(row.message_tokens for row in active)
    observations = sum(row.tokens for row in active)
    assert "Context strategy: observational" in gauges
    assert re.search(
        rf'Unobserved messages\s*<meter min="0" max="200" low="160" high="200" optimum="0" '
        rf'value="{unobserved}">',
        gauges,
    )
    assert f"{unobserved} / 200 tokens" in gauges
    assert re.search(
        rf'Active observations\s*<meter min="0" max="100000" low="80000" [^>]*'
        rf'value="{observations}">',
        gauges,
    )
    assert f"{observations} / 100,000 tokens" in gauges and "work starts at 80,000" in gauges
    assert "summary included" not in gauges  # compaction is not this agent's strategy


def test_compaction_shows_a_summary_band_and_its_budget(operator, alice):
    configure(alice, context_strategy="compaction", compaction_budget_tokens=1000)
    configure(alice, recent_window=2)
    thread = alice.new_thread()
    alice.append(thread["id"], *[ticket(n) for n in range(1, 41)])
    job_run_pending()
    thread = Thread.objects.get(pk=thread["id"])

    content = _page(operator, thread, seq=1)

    summary = ThreadSummary.objects.filter(thread=thread).order_by("-version").first()
    assert summary is not None
    band = re.search(
        rf'<details class="memory-band summary" id="summary-{summary.id}">(.*?)</details>',
        content,
        re.S,
    ).group(1)
    assert (
        f"summarised #1–#{summary.covers_up_to_seq}, {summary.message_tokens:,} → "
        f"{summary.tokens:,} tokens" in band
    )
    assert f"summary v{summary.version}" in band
    assert content.index(f'id="summary-{summary.id}"') < content.index('id="m-1"')
    estimate = thread.token_count - summary.message_tokens + summary.tokens
    assert "Thread, summary included" in content
    assert f"{estimate:,} / 1,000 tokens" in content


def test_recorded_failures_are_listed_with_their_reason(operator, observed):
    ObservationFailure.objects.create(
        thread=observed,
        stage="observer",
        generation=1,
        first_seq=1,
        last_seq=10,
        model="obs-model",
        prompt_version="observer-v1",
        error=f"the answer was not JSON: {SCRIPT}",
        outcome="kept the extractive observations",
    )

    content = _page(operator, observed)

    failures = content[
        content.index('id="memory-failures"') : content.index('id="thread-contexts"')
    ]
    assert "#1–#10 · kept the extractive observations" in failures
    assert "the answer was not JSON: &lt;script&gt;" in failures
    assert "obs-model" in failures


def test_a_band_begun_before_the_page_opens_it_and_moves_to_its_place(operator, alice):
    configure(alice, observer_message_tokens=200, reflector_observation_tokens=10_000_000)
    configure(alice, recent_window=2)
    thread = alice.new_thread()
    alice.append(thread["id"], *[{"role": "user", "content": f"line {n}"} for n in range(1, 251)])
    job_run_pending()
    thread = Thread.objects.get(pk=thread["id"])
    straddling = Observation.objects.get(thread=thread, first_seq__lt=151, last_seq__gte=151)

    content = _page(operator, thread)

    assert _seqs(content)[0] == 151
    top = content[content.index('<div id="load-earlier">') : content.index('<ol class="timeline">')]
    assert f'id="obs-{straddling.id}"' in top
    assert content.count(f'id="obs-{straddling.id}"') == 1
    earlier = operator.get(f"/console/threads/{thread.id}/earlier/?before=151", **HTMX)
    fragment = earlier.content.decode()
    timeline = fragment[fragment.index('<ol class="timeline">') :]
    assert timeline.index(f'id="obs-{straddling.id}"') < timeline.index(
        f'id="m-{straddling.first_seq}"'
    )
    later = operator.get(f"/console/threads/{thread.id}/later/?after=150", **HTMX)
    assert f'id="obs-{straddling.id}"' not in later.content.decode()  # shown above already


def _context(actor, thread_id, **body) -> dict:
    response = actor.post(f"/api/v1/threads/{thread_id}/context", body)
    assert response.status_code == 200, response.content
    return response.json()


def _links(content: str) -> dict[int, list[str]]:
    """The context links of each message of the timeline, by seq."""
    links = {}
    for seq, item in re.findall(r'id="m-(\d+)"[^>]*>(.*?)</li>', content, re.S):
        links[int(seq)] = re.findall(
            r'class="context-link" href="/console/contexts/([^/]+)/"', item
        )
    return links


def test_each_context_is_linked_from_the_turn_it_preceded(operator, alice):
    configure(alice, recent_window=5)
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "Is the router fixed?"})
    first = _context(alice, thread["id"])
    alice.append(
        thread["id"],
        {"role": "assistant", "content": "Checking."},
        {"role": "user", "content": "Thanks."},
    )
    second = _context(alice, thread["id"])
    newest = _context(alice, thread["id"])  # nothing appended since: it goes with message 3

    links = _links(_page(operator, Thread.objects.get(pk=thread["id"])))

    assert links == {
        1: [],
        2: [first["context_id"]],
        3: [second["context_id"], newest["context_id"]],
    }


def test_a_context_without_recent_messages_goes_with_the_next_message_stored(operator, alice):
    configure(alice, context_strategy="none", recent_window=0)
    thread = alice.new_thread()
    alice.append(
        thread["id"], {"role": "user", "content": "one"}, {"role": "user", "content": "two"}
    )
    given = _context(alice, thread["id"])
    alice.append(thread["id"], {"role": "assistant", "content": "three"})

    links = _links(_page(operator, Thread.objects.get(pk=thread["id"])))

    assert links == {1: [], 2: [], 3: [given["context_id"]]}


def test_the_sidebar_lists_the_newest_contexts_and_links_to_all(operator, alice):
    thread = alice.new_thread(title="Chatty")
    alice.append(thread["id"], {"role": "user", "content": "hello"})
    given = [_context(alice, thread["id"], query=f"question {n}") for n in range(7)]

    content = _page(operator, Thread.objects.get(pk=thread["id"]))

    sidebar = content[content.index('id="thread-contexts"') :]
    listed = re.findall(r'<p><a href="/console/contexts/([^/]+)/">', sidebar)
    assert listed == [c["context_id"] for c in reversed(given)][:5]
    assert f'href="/console/threads/{thread["id"]}/contexts/">All contexts' in sidebar
    everything = operator.get(f"/console/threads/{thread['id']}/contexts/").content.decode()
    assert re.findall(r'<td><a href="/console/contexts/([^/]+)/">', everything) == [
        c["context_id"] for c in reversed(given)
    ]
    assert "question 6" in everything


def test_a_thread_without_memory_says_what_starts_it(operator, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "hello"})

    content = _page(operator, Thread.objects.get(pk=thread["id"]))

    assert "Nothing observed or summarised yet: the context strategy is observational" in content
    assert "No model failures recorded." in content
    assert "No contexts given yet." in content
    assert 'class="memory-band' not in content


@pytest.mark.parametrize("path", ["", "contexts/", "earlier/?before=2", "later/?after=0"])
def test_an_unknown_thread_is_404(operator, db, path):
    response = operator.get(f"/console/threads/01a20000-0000-7000-8000-000000000000/{path}")

    assert response.status_code == 404


def test_the_page_reads_memory_in_a_fixed_number_of_queries(operator, alice):
    configure(alice, observer_message_tokens=200, reflector_observation_tokens=300)
    configure(alice, recent_window=2)
    thread = alice.new_thread()

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            _page(operator, Thread.objects.get(pk=thread["id"]))
        return len(captured.captured_queries)

    counts = []
    for batch in range(3):
        alice.append(thread["id"], *[ticket(n) for n in range(batch * 6, batch * 6 + 6)])
        job_run_pending()
        _context(alice, thread["id"], query="router")
        counts.append(queries())

    assert Observation.objects.filter(thread_id=thread["id"], is_reflection=True).exists()
    assert counts[1] == counts[2]  # more observations, reflections and contexts: no more queries
