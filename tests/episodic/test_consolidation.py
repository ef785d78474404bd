"""Hippo consolidation: messages past the short-term window become consolidated entries."""

import json
import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from apps.episodic.consolidation import (
    JOB_KIND,
    consolidation_enqueue_due,
    thread_consolidate_now,
)
from apps.episodic.consolidation.fallback import is_trivia
from apps.episodic.models import ConsolidationProgress, MemoryEntry
from apps.episodic.prompts import (
    consolidation_create,
    consolidation_is_useful,
    consolidation_rewrite,
)
from apps.jobs.models import Job
from apps.jobs.services import job_run_pending
from apps.memconfig.selectors import config_effective
from apps.memconfig.services import config_update
from apps.threads.models import Thread

TRIVIA = ["ok", "Thanks!", "got it", "Hi there", "thank you so much", "Good morning!", "OK 👍"]
STATEMENTS = [
    "Our production database is PostgreSQL 16 on host db-7.",
    "We decided to deploy every Tuesday at 09:00 UTC.",
    "My name is Dana and I run the billing team.",
    "The staging cluster lives in eu-west-1.",
]


def configure(actor, **changes) -> None:
    config_update(agent=actor.agent, changes=changes, changed_by="test")


def conversation(count: int) -> list[dict]:
    """Return count messages: user statements and trivia, assistant acknowledgements, tools."""
    messages = []
    for index in range(count):
        match index % 4:
            case 0:
                text = (
                    f"{STATEMENTS[(index // 4) % len(STATEMENTS)]} Ticket T-{index} is due Friday."
                )
                messages.append({"role": "user", "content": text})
            case 1:
                messages.append({"role": "assistant", "content": "Got it, thanks!"})
            case 2:
                messages.append({"role": "user", "content": TRIVIA[index % len(TRIVIA)]})
            case 3:
                messages.append(
                    {"role": "tool", "kind": "tool_result", "name": "lookup", "content": "ok"}
                )
    return messages


def thread_with(actor, messages, **fields) -> Thread:
    thread = actor.new_thread(**fields)
    for start in range(0, len(messages), 50):
        actor.append(thread["id"], *messages[start : start + 50])
    return Thread.objects.get(pk=thread["id"])


def consolidate(thread) -> object:
    thread.refresh_from_db()
    return thread_consolidate_now(thread=thread)


def entries_of(thread):
    return MemoryEntry.objects.filter(thread=thread, kind="consolidated").order_by("created_at")


def test_it_turns_statements_outside_the_window_into_consolidated_entries(alice):
    thread = thread_with(alice, conversation(30), resource_id="dana")

    report = consolidate(thread)

    # 30 messages, the last 10 stay short-term: #1–#20 are judged; user statements are at
    # #1, #5, #9, #13, #17 (#17 repeats #1's statement, but names another ticket).
    assert (report.first_seq, report.last_seq, report.messages) == (1, 20, 20)
    entries = list(entries_of(thread))
    assert [e.metadata["first_seq"] for e in entries] == [1, 5, 9, 13, 17]
    assert all(e.source == "consolidation" and e.status == "pending" for e in entries)
    assert all(e.resource.external_id == "dana" for e in entries)
    assert entries[0].content == f"The user said: {STATEMENTS[0]} Ticket T-0 is due Friday."
    assert entries[0].evidence in entries[0].message.content
    assert entries[0].metadata["method"] == "extractive"
    progress = ConsolidationProgress.objects.get(thread=thread)
    assert (progress.consolidated_up_to, progress.entries_made) == (20, 5)
    assert report.created == 5 and report.skipped == 15


def test_running_twice_over_the_same_range_creates_nothing_new(alice):
    thread = thread_with(alice, conversation(30))
    consolidate(thread)
    before = list(entries_of(thread).values_list("id", flat=True))

    again = consolidate(thread)

    assert again.first_seq is None and again.created == 0
    assert list(entries_of(thread).values_list("id", flat=True)) == before
    assert ConsolidationProgress.objects.get(thread=thread).entries_made == len(before)


def test_a_rerun_of_a_range_whose_progress_was_lost_stores_no_duplicates(alice):
    thread = thread_with(alice, conversation(30))
    consolidate(thread)
    count = entries_of(thread).count()
    ConsolidationProgress.objects.filter(thread=thread).update(consolidated_up_to=0)

    report = consolidate(thread)

    assert report.created == 0 and report.duplicates == count
    assert entries_of(thread).count() == count


def test_new_messages_are_consolidated_from_where_the_last_run_stopped(alice):
    thread = thread_with(alice, conversation(30))
    consolidate(thread)
    alice.append(
        thread.pk, *[{"role": "user", "content": f"Server s-{n} runs Debian 12."} for n in range(8)]
    )

    report = consolidate(thread)

    assert (report.first_seq, report.last_seq) == (21, 28)
    assert ConsolidationProgress.objects.get(thread=thread).consolidated_up_to == 28


@pytest.mark.parametrize("text", TRIVIA + ["", "   ", "okay, thanks!", "yes", "bye"])
def test_the_fallback_skips_trivia(alice, text):
    # A user turn of white space alone is refused when appended (it may still be in older data).
    said = text if text.strip() else "."
    messages = [{"role": "user", "content": said}] + [{"role": "assistant", "content": "ok"}] * 10
    thread = thread_with(alice, messages)

    report = consolidate(thread)

    assert report.messages == 1 and report.created == 0
    assert is_trivia(text) and is_trivia(said)


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ({"role": "user", "content": "Can you check the logs?"}, None),
        ({"role": "user", "content": "Is it up? The API key rotates monthly."}, "The user said"),
        ({"role": "assistant", "content": "Let me look at that for you."}, None),
        ({"role": "assistant", "content": "I deployed v2.3 to staging."}, "Outcome"),
        ({"role": "assistant", "kind": "error", "content": "HTTP 503 from billing."}, "Error"),
        ({"role": "tool", "kind": "tool_result", "name": "deploy", "content": ""}, None),
        ({"role": "tool", "kind": "tool_result", "name": "deploy", "content": "{}"}, None),
        ({"role": "tool", "kind": "tool_result", "name": "db", "content": "rows: 3"}, None),
        (
            {"role": "tool", "kind": "tool_result", "name": "db", "content": "Error: timeout"},
            "Error from tool db",
        ),
        ({"role": "system", "content": "You are a helpful agent for ACME billing."}, None),
    ],
)
def test_the_fallback_keeps_statements_decisions_errors_and_outcomes_only(alice, message, kept):
    thread = thread_with(alice, [message] + [{"role": "user", "content": "thanks"}] * 10)

    consolidate(thread)

    contents = list(entries_of(thread).values_list("content", flat=True))
    if kept is None:
        assert contents == []
    else:
        assert len(contents) == 1 and contents[0].startswith(f"{kept}: ")


@pytest.mark.parametrize(
    "said",
    [
        "We moved to build 4.2 on Monday.",
        "The users endpoint is https://api.example.com/v2.1/users now.",
        "The database host moved to 10.0.0.5 yesterday.",
        "The electrician Mr. Okafor comes on Tuesday morning.",
    ],
)
def test_the_fallback_keeps_decimals_urls_addresses_and_abbreviations_whole(alice, said):
    thread = thread_with(
        alice, [{"role": "user", "content": said}] + [{"role": "user", "content": "thanks"}] * 10
    )

    consolidate(thread)

    [entry] = entries_of(thread)
    assert entry.content == f"The user said: {said}"
    assert entry.evidence == said


def test_short_term_limit_keeps_the_newest_messages_out_of_consolidation(alice, bob):
    configure(bob, short_term_limit=25)
    statements = [{"role": "user", "content": f"Host h-{n} runs nginx 1.{n}."} for n in range(30)]
    alices = thread_with(alice, statements)
    bobs = thread_with(bob, statements)

    consolidate(alices)
    consolidate(bobs)

    assert ConsolidationProgress.objects.get(thread=alices).consolidated_up_to == 20
    assert ConsolidationProgress.objects.get(thread=bobs).consolidated_up_to == 5
    assert entries_of(alices).count() == 20
    assert entries_of(bobs).count() == 5


def test_consolidation_interval_decides_when_a_thread_is_queued_again(alice, bob):
    configure(bob, consolidation_interval_seconds=60)
    alices = thread_with(alice, conversation(30))
    bobs = thread_with(bob, conversation(30))

    assert consolidation_enqueue_due() == 2  # never consolidated: both are due
    job_run_pending()
    alice.append(alices.pk, *conversation(12))
    bob.append(bobs.pk, *conversation(12))
    assert consolidation_enqueue_due() == 0  # both just ran

    later = timezone.now() + timedelta(seconds=120)
    assert consolidation_enqueue_due(now=later) == 1  # bob's 60 s passed, alice's 300 s did not
    assert Job.objects.get(kind=JOB_KIND, status="pending").payload["thread_id"] == str(bobs.pk)
    assert consolidation_enqueue_due(now=timezone.now() + timedelta(seconds=301)) == 2
    assert Job.objects.filter(kind=JOB_KIND, status="pending").count() == 2  # bob's is reused


def test_a_thread_inside_its_window_is_never_queued(alice):
    thread_with(alice, conversation(10))

    assert consolidation_enqueue_due() == 0


def test_entries_follow_the_approval_setting(alice, bob):
    configure(bob, episodic_approval_required=False)
    alices = thread_with(alice, conversation(30))
    bobs = thread_with(bob, conversation(30))

    consolidate(alices)
    consolidate(bobs)

    assert set(entries_of(alices).values_list("status", flat=True)) == {"pending"}
    assert set(entries_of(bobs).values_list("status", flat=True)) == {"approved"}
    recalled = bob.post("/api/v1/episodic/recall", {"query": "PostgreSQL database host"}).json()
    assert recalled["results"]
    assert all(r["kind"] == "consolidated" for r in recalled["results"])
    assert not alice.post("/api/v1/episodic/recall", {"query": "PostgreSQL database"}).json()[
        "results"
    ]


def test_consolidation_keeps_each_agents_entries_to_itself(alice, bob, carol):
    for actor in (alice, bob, carol):
        configure(actor, episodic_approval_required=False)
    alices = thread_with(alice, conversation(30), resource_id="dana")
    thread_with(bob, conversation(30), resource_id="dana")
    thread_with(carol, conversation(30), resource_id="dana")

    call_command("consolidate", stdout=StringIO())

    for actor in (alice, bob, carol):
        entries = MemoryEntry.objects.filter(agent=actor.agent, kind="consolidated")
        assert entries.count() == 5
        assert {e.thread.agent_id for e in entries} == {actor.agent.id}
    found = bob.get("/api/v1/episodic", {"resource_id": "dana"}).json()["results"]
    assert len(found) == 5 and not {e["thread_id"] for e in found} & {str(alices.pk)}


def test_consolidation_keeps_each_end_users_entries_to_them(alice):
    configure(alice, episodic_approval_required=False)
    danas = thread_with(alice, conversation(30), resource_id="dana")
    erins = thread_with(alice, conversation(30), resource_id="erin")

    call_command("consolidate", stdout=StringIO())

    for thread in (danas, erins):
        entries = MemoryEntry.objects.filter(thread=thread, kind="consolidated")
        assert entries.count() == 5
        assert {entry.resource_id for entry in entries} == {thread.resource_id}
    for resource, thread in (("dana", danas), ("erin", erins)):
        found = alice.get("/api/v1/episodic", {"resource_id": resource}).json()["results"]
        assert len(found) == 5 and {e["thread_id"] for e in found} == {str(thread.pk)}


def test_the_command_consolidates_one_thread_or_one_agent_and_says_what_it_did(alice, bob):
    first = thread_with(alice, conversation(30))
    second = thread_with(alice, conversation(14), resource_id="ops")
    bobs = thread_with(bob, conversation(30))

    out = StringIO()
    call_command("consolidate", "--thread", str(first.pk), stdout=out)
    assert f"thread {first.pk}: messages #1–#20 (20) → 5 entries created" in out.getvalue()
    assert "1 threads, 20 messages consolidated, 5 entries created" in out.getvalue()

    out = StringIO()
    call_command("consolidate", "--agent", "alice", "--project", "acme", stdout=out)
    assert f"thread {first.pk}: nothing to consolidate" in out.getvalue()
    assert f"thread {second.pk}: messages #1–#4 (4) → 1 entries created" in out.getvalue()
    assert str(bobs.pk) not in out.getvalue()
    assert not entries_of(bobs).exists()


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--thread", "nope"], "--thread: 'nope' is not a thread id"),
        (["--thread", "0190f000-0000-7000-8000-000000000000"], "--thread: no thread"),
        (["--agent", "zed"], "--agent: no agent 'zed'"),
        (["--project", "acme"], "--project: give it with --agent"),
    ],
)
def test_the_command_names_what_is_wrong_with_its_arguments(alice, args, error):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match=re.escape(error)):
        call_command("consolidate", *args, stdout=StringIO())


# With a model: the fake OpenAI server on loopback answers the three prompts.

_BLOCK = re.compile(r"#(\d+) (\w+)[^\n]*:\n(.*?)(?=\n\n#\d+ |\Z)", re.DOTALL)


def careful_model(body: dict) -> str:
    """Answer the three consolidation prompts as a careful model would."""
    system, text = body["messages"][0]["content"], body["messages"][-1]["content"]
    if system == consolidation_is_useful.SYSTEM:
        keep = [int(seq) for seq, _, said in _BLOCK.findall(text) if "runs" in said]
        return json.dumps({"useful": keep})
    if system == consolidation_rewrite.SYSTEM:
        memories = [
            {"seqs": [int(seq)], "content": f"Noted: {said.strip()}"}
            for seq, _, said in _BLOCK.findall(text)
        ]
        return json.dumps({"memories": memories})
    if system == consolidation_create.SYSTEM:
        candidates = json.loads(text)["candidates"]
        return json.dumps(
            {"create": [c["index"] for c in candidates if "skip-me" not in c["candidate"]]}
        )
    raise AssertionError(f"unexpected prompt: {system[:80]}")


def test_with_a_model_it_asks_is_useful_rewrite_and_create_and_stores_what_it_chose(alice, llm):
    messages = [
        {"role": "user", "content": "Web-1 runs Ubuntu 24.04."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "skip-me runs nothing useful."},
        {"role": "user", "content": "Thanks!"},
    ] + [{"role": "user", "content": "ok"}] * 10
    thread = thread_with(alice, messages)
    llm.script(*[careful_model] * 3)

    report = consolidate(thread)

    entries = list(entries_of(thread))
    assert [e.content for e in entries] == ["Noted: Web-1 runs Ubuntu 24.04."]
    assert entries[0].metadata["method"] == "llm"
    assert entries[0].metadata["model"] == config_effective(agent=alice.agent)["observer_model"]
    assert consolidation_is_useful.VERSION in entries[0].metadata["prompt_version"]
    assert (entries[0].metadata["first_seq"], entries[0].metadata["last_seq"]) == (1, 1)
    assert report.methods == {"llm"} and report.skipped == 3
    systems = [body["messages"][0]["content"] for body in llm.bodies("/v1/chat/completions")]
    assert systems == [
        consolidation_is_useful.SYSTEM,
        consolidation_rewrite.SYSTEM,
        consolidation_create.SYSTEM,
    ]


def test_a_consolidated_entry_the_model_says_updates_an_older_one_supersedes_it(alice, llm):
    configure(alice, episodic_approval_required=False)
    older = alice.post("/api/v1/episodic", {"content": "Web-1 runs Ubuntu 22.04."}).json()
    other = alice.post("/api/v1/episodic", {"content": "Backups run nightly."}).json()
    messages = [{"role": "user", "content": "Web-1 runs Ubuntu 24.04 since the upgrade."}]
    thread = thread_with(alice, messages + [{"role": "user", "content": "ok"}] * 10)
    asked = []

    def updating_model(body):
        system, text = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system != consolidation_create.SYSTEM:
            return careful_model(body)
        candidates = json.loads(text)["candidates"]
        asked.extend(candidates)
        shown = {e["id"] for e in candidates[0]["existing"]}
        # The shown older entry, an id never shown, and a candidate index that does not exist.
        named = {"0": older["id"]} if older["id"] in shown else {}
        return json.dumps({"create": [0], "supersedes": {**named, "7": other["id"]}})

    llm.script(*[updating_model] * 3)
    consolidate(thread)

    (entry,) = entries_of(thread)
    assert entry.content == "Noted: Web-1 runs Ubuntu 24.04 since the upgrade."
    assert {"id": older["id"], "content": older["content"]} in asked[0]["existing"]
    assert entry.supersedes_id is not None and str(entry.supersedes_id) == older["id"]
    old, kept = MemoryEntry.objects.get(pk=older["id"]), MemoryEntry.objects.get(pk=other["id"])
    assert (old.status, old.superseded_by_id) == ("superseded", entry.pk)
    assert kept.status == "approved"
    recalled = alice.post("/api/v1/episodic/recall", {"query": "Web-1 Ubuntu"}).json()["results"]
    assert older["id"] not in {hit["id"] for hit in recalled}


def test_a_model_that_answers_nonsense_leaves_the_batch_to_the_fallback(alice, llm):
    thread = thread_with(alice, conversation(30))
    llm.script("not json at all")

    report = consolidate(thread)

    assert report.methods == {"extractive"} and report.created == 5
    assert {e.metadata["method"] for e in entries_of(thread)} == {"extractive"}


def test_the_job_does_what_the_command_does(alice):
    thread = thread_with(alice, conversation(30))
    consolidation_enqueue_due()

    job_run_pending()

    assert Job.objects.get(kind=JOB_KIND).status == "succeeded"
    assert entries_of(thread).count() == 5
    assert ConsolidationProgress.objects.get(thread=thread).last_run_at is not None


def test_a_deleted_thread_ends_its_queued_job_quietly(alice):
    thread = thread_with(alice, conversation(30))
    consolidation_enqueue_due()
    alice.delete(f"/api/v1/threads/{thread.pk}")

    job_run_pending()

    assert Job.objects.get(kind=JOB_KIND).status == "succeeded"
