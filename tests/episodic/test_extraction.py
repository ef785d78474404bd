"""Extraction after a turn: the model proposes, the checks of seed 003 decide what is stored."""

import json

import pytest

from apps.episodic.extraction import JOB_KIND
from apps.episodic.extraction.jobs import run_extraction
from apps.episodic.extraction.proposals import cap_at_sentence
from apps.episodic.models import ExtractionRun, MemoryEntry
from apps.episodic.prompts import extraction as prompt
from apps.jobs.models import Job, JobStatus
from apps.jobs.services import job_run_pending
from tests.episodic.conftest import configure, entries_answer

USER_SAYS = "The workspace stays locked after I renewed on Monday."
ASSISTANT_SAYS = (
    "The active subscription is on record A, but entitlement checks are reading record B. "
    "Merging the two records should unlock it."
)
FINDING = {
    "content": "A workspace stayed locked after renewal because record A held the subscription "
    "while entitlement checks read record B.",
    "source": "verified_assistant_finding",
    "evidence": "The active subscription is on record A, but entitlement checks are reading "
    "record B.",
}


def _turn(actor, thread_id=None, *, user=USER_SAYS, assistant=ASSISTANT_SAYS) -> str:
    thread_id = thread_id or actor.new_thread(resource_id="cust-1")["id"]
    actor.append(
        thread_id,
        {"role": "user", "content": user},
        {"role": "assistant", "content": assistant},
    )
    return thread_id


def _recalled(actor, query="record subscription entitlement", **extra) -> list[str]:
    response = actor.post(
        "/api/v1/episodic/recall", {"query": query, "resource_id": "cust-1", **extra}
    )
    assert response.status_code == 200, response.content
    return [result["content"] for result in response.json()["results"]]


def test_a_verbatim_entry_is_stored_pending_and_a_fabricated_one_is_counted_not_stored(alice, llm):
    fabricated = {**FINDING, "content": "Billing was down.", "evidence": "billing is down"}
    llm.script(entries_answer(FINDING, fabricated))
    thread_id = _turn(alice)

    job_run_pending()

    [entry] = MemoryEntry.objects.all()
    assert entry.status == "pending" and entry.source == "verified_assistant_finding"
    assert entry.evidence == FINDING["evidence"] and entry.message.role == "assistant"
    assert str(entry.thread_id) == thread_id and entry.resource.external_id == "cust-1"
    run = ExtractionRun.objects.get()
    assert (run.proposed, run.stored, run.rejected) == (2, 1, 1)
    assert run.rejections == [
        {
            "source": "verified_assistant_finding",
            "reason": "evidence: not found verbatim in a user or assistant message of the turn",
        }
    ]
    assert (run.first_seq, run.last_seq, run.prompt_version) == (1, 2, prompt.VERSION)
    assert entry.extraction == run
    job = Job.objects.get(kind=JOB_KIND)
    assert job.status == JobStatus.SUCCEEDED and "1 rejected" in job.progress_note


def test_the_api_shows_the_entrys_provenance(alice, llm):
    llm.script(entries_answer(FINDING))
    configure(alice, extraction_model="extractor-1")
    _turn(alice)
    job_run_pending()

    [body] = alice.get("/api/v1/episodic", {"status": "pending"}).json()["results"]

    assert body["extraction"]["model"] == "extractor-1"
    assert body["extraction"]["prompt_version"] == prompt.VERSION
    assert (body["extraction"]["first_seq"], body["extraction"]["last_seq"]) == (1, 2)
    assert body["version"] == 1 and body["supersedes"] is None


def test_the_same_turn_extracted_again_stores_nothing_new(alice, llm):
    llm.script(entries_answer(FINDING), entries_answer({**FINDING, "content": "Other words."}))
    _turn(alice)
    job_run_pending()
    job = Job.objects.get(kind=JOB_KIND)

    run_extraction(job)  # a repeated delivery of the same job

    assert MemoryEntry.objects.count() == 1
    assert ExtractionRun.objects.count() == 1
    assert len(llm.bodies("/v1/chat/completions")) == 1


def test_a_near_duplicate_of_a_stored_entry_is_not_stored_twice(alice, llm, use_embedder):
    run_jobs = use_embedder(alice)
    llm.script(
        entries_answer(FINDING),
        entries_answer({**FINDING, "content": FINDING["content"].replace(".", "!")}),
    )
    thread_id = _turn(alice)
    run_jobs()
    _turn(alice, thread_id)

    run_jobs()

    assert MemoryEntry.objects.count() == 1
    second = ExtractionRun.objects.get(last_seq=4)
    assert (second.stored, second.duplicates) == (0, 1)


def test_a_user_sourced_entry_quoting_only_the_assistant_is_rejected(alice, llm):
    llm.script(entries_answer({**FINDING, "source": "user_assertion"}))
    _turn(alice)

    job_run_pending()

    assert not MemoryEntry.objects.exists()
    run = ExtractionRun.objects.get()
    assert run.rejected == 1
    assert (
        run.rejections[0]["reason"] == "evidence: not found verbatim in a user message of the turn"
    )


def test_a_user_assertion_quoting_the_user_is_stored(alice, llm):
    said = {"content": "The workspace stayed locked after a Monday renewal.", "evidence": "renewed"}
    llm.script(entries_answer({**said, "source": "user_assertion"}))
    _turn(alice)

    job_run_pending()

    entry = MemoryEntry.objects.get()
    assert entry.source == "user_assertion" and entry.message.role == "user"


@pytest.mark.parametrize(
    "answer, reason",
    [
        ("not json at all", "malformed answer: model "),
        (json.dumps({"entries": "none"}), "malformed answer: model "),
        (json.dumps({"something": []}), "malformed answer: model "),
        (entries_answer({**FINDING, "source": "rumour"}), "source: 'rumour' is not a source"),
        (entries_answer("just a string"), "not a JSON object"),
        (entries_answer({**FINDING, "content": "  "}), "content: missing or blank"),
        (entries_answer({**FINDING, "evidence": ""}), "evidence: missing"),
    ],
)
def test_a_malformed_answer_or_a_bad_label_is_rejected_and_counted(alice, llm, answer, reason):
    llm.script(answer)
    _turn(alice)

    job_run_pending()

    assert not MemoryEntry.objects.exists()
    run = ExtractionRun.objects.get()
    assert run.status == "done" and run.rejected == 1
    assert run.rejections[0]["reason"].startswith(reason)


def test_rejections_are_counted_per_agent_on_the_moderation_page(alice, bob, llm, as_role):
    llm.script(
        entries_answer({**FINDING, "evidence": "made up"}, {**FINDING, "source": "x"}),
        entries_answer(FINDING),
    )
    _turn(alice)
    job_run_pending()
    _turn(bob)
    job_run_pending()

    page = as_role("moderator").get("/console/moderation/").content.decode()

    extraction = page.split('id="extraction"')[1].split("</section>")[0]
    alice_row = extraction.split("acme/alice")[1].split("</tr>")[0]
    bob_row = extraction.split("acme/bob")[1].split("</tr>")[0]
    assert [cell.strip() for cell in _cells(alice_row)[-4:]] == ["1", "0", "0", "2"]
    assert [cell.strip() for cell in _cells(bob_row)[-4:]] == ["1", "1", "0", "0"]


def _cells(row: str) -> list[str]:
    return [part.split("</td>")[0] for part in row.split("<td>")[1:]]


def test_at_most_max_entries_per_turn_are_stored(alice, llm):
    configure(alice, episodic_max_entries_per_turn=1)
    second = {**FINDING, "content": "Merging records unlocks a locked workspace."}
    llm.script(entries_answer(FINDING, second))
    _turn(alice)

    job_run_pending()

    assert list(MemoryEntry.objects.values_list("content", flat=True)) == [FINDING["content"]]
    run = ExtractionRun.objects.get()
    assert (run.stored, run.over_cap, run.rejected) == (1, 1, 0)


def test_a_long_entry_is_cut_at_a_sentence_boundary_not_refused(alice, llm):
    configure(alice, episodic_max_entry_length=120)
    long = FINDING["content"] + " Merging them fixed it. " + "More detail follows here. " * 5
    llm.script(entries_answer({**FINDING, "content": long}))
    _turn(alice)

    job_run_pending()

    content = MemoryEntry.objects.get().content
    assert content == FINDING["content"]
    assert len(content) <= 120


@pytest.mark.parametrize(
    "text, limit, expected",
    [
        ("Short.", 50, "Short."),
        ("One two. Three four five six seven.", 20, "One two."),
        ("A sentence that runs on without a stop at all", 20, "A sentence that…"),
        ("Ends here! And more text follows", 11, "Ends here!"),
    ],
)
def test_cap_at_sentence(text, limit, expected):
    assert cap_at_sentence(text, limit) == expected
    assert len(cap_at_sentence(text, limit)) <= limit


def test_pending_entries_are_never_injected_or_recalled_until_approved(alice, llm, as_role):
    llm.script(entries_answer(FINDING))
    thread_id = _turn(alice)
    job_run_pending()
    entry = MemoryEntry.objects.get()

    assert _recalled(alice) == []
    context = alice.post(
        f"/api/v1/threads/{thread_id}/context", {"query": "record subscription"}
    ).json()
    memory = [block for block in context["blocks"] if block["name"] == "memory"]
    assert all(FINDING["content"] not in block["text"] for block in memory)

    as_role("moderator").post(f"/console/moderation/{entry.id}/approve/")

    assert _recalled(alice) == [FINDING["content"]]


def test_without_approval_required_extracted_entries_are_approved(alice, llm):
    configure(alice, episodic_approval_required=False)
    llm.script(entries_answer(FINDING))
    _turn(alice)

    job_run_pending()

    assert MemoryEntry.objects.get().status == "approved"
    assert _recalled(alice) == [FINDING["content"]]


def test_the_model_reads_the_turn_as_role_labelled_json_with_what_is_known(alice, llm):
    configure(alice, extraction_model="extractor-1")
    llm.script(entries_answer(FINDING), entries_answer())
    thread_id = _turn(alice)
    job_run_pending()
    alice.put(
        "/api/v1/resources/cust-1/profile",
        {"version": 0, "content": "Prefers email; based in Berlin."},
    )
    _turn(alice, thread_id, user="Still locked?", assistant="Merged; it is unlocked now.")

    job_run_pending()

    first, second = llm.bodies("/v1/chat/completions")
    assert first["model"] == "extractor-1"
    assert first["response_format"] == {"type": "json_object"}
    assert second["messages"][0]["content"] == prompt.SYSTEM
    text = second["messages"][1]["content"]
    transcript = json.loads(text.split("Transcript of the turn:\n", 1)[1])
    assert transcript == [
        {"seq": 3, "role": "user", "content": "Still locked?"},
        {"seq": 4, "role": "assistant", "content": "Merged; it is unlocked now."},
    ]
    assert "Prefers email; based in Berlin." in text.split("</user-profile>")[0]
    entry = MemoryEntry.objects.get()
    assert f"- [{entry.id}] {entry.content}" in text.split("</memory>")[0]


def test_the_model_defaults_to_the_observer_model(alice, llm):
    configure(alice, observer_model="observer-x")
    llm.script(entries_answer())
    _turn(alice)

    job_run_pending()

    assert llm.bodies("/v1/chat/completions")[0]["model"] == "observer-x"


def test_a_turn_spans_the_messages_since_the_previous_answer_tool_steps_included(alice, llm):
    llm.script(entries_answer(), entries_answer())
    thread_id = _turn(alice)
    alice.append(
        thread_id,
        {"role": "user", "content": "check the records"},
        {"role": "assistant", "kind": "tool_call", "name": "lookup", "payload": {"id": "A"}},
        {"role": "tool", "kind": "tool_result", "name": "lookup", "content": "A: active"},
        {"role": "assistant", "content": "Record A is active."},
    )

    job_run_pending()

    runs = list(ExtractionRun.objects.order_by("last_seq").values_list("first_seq", "last_seq"))
    assert runs == [(1, 2), (3, 6)]
    text = llm.bodies("/v1/chat/completions")[1]["messages"][1]["content"]
    transcript = json.loads(text.split("Transcript of the turn:\n", 1)[1])
    assert [row["seq"] for row in transcript] == [3, 4, 5, 6]
    assert transcript[1] == {
        "seq": 4,
        "role": "assistant",
        "kind": "tool_call",
        "name": "lookup",
        "content": '{"id":"A"}',
    }


def test_a_failing_model_fails_the_attempt_and_a_retry_extracts_the_turn(alice, llm):
    llm.fail_next(1, 503)
    llm.script(entries_answer(FINDING))
    _turn(alice)

    job_run_pending()
    assert ExtractionRun.objects.get().status == "failed"
    job = Job.objects.get(kind=JOB_KIND)
    assert job.status == JobStatus.PENDING and "503" in job.error

    run_extraction(job)

    assert ExtractionRun.objects.get().status == "done"
    assert MemoryEntry.objects.count() == 1


def test_without_an_endpoint_extraction_is_off_and_the_config_says_why(alice, settings):
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = ""
    _turn(alice)

    assert not Job.objects.filter(kind=JOB_KIND).exists()
    extraction = alice.get("/api/v1/config").json()["extraction"]
    assert extraction["enabled"] is False
    assert "no LLM endpoint" in extraction["reason"]


def test_the_console_says_extraction_is_off_without_an_endpoint(settings, as_role):
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = ""

    page = as_role("moderator").get("/console/moderation/").content.decode()

    assert "Extraction is off: no LLM endpoint is configured" in page


def test_the_setting_turns_extraction_off(alice, llm):
    configure(alice, episodic_extraction_enabled=False)
    _turn(alice)

    assert not Job.objects.filter(kind=JOB_KIND).exists()
    assert alice.get("/api/v1/config").json()["extraction"] == {
        "enabled": False,
        "model": "google/gemini-2.5-flash",
        "reason": "episodic_extraction_enabled is off",
    }


def test_only_an_assistant_answer_closes_a_turn(alice, llm):
    thread_id = alice.new_thread()["id"]
    alice.append(
        thread_id,
        {"role": "user", "content": "hello"},
        {"role": "assistant", "kind": "tool_call", "name": "lookup", "payload": {}},
        {"role": "tool", "kind": "tool_result", "name": "lookup", "content": "ok"},
    )

    assert not Job.objects.filter(kind=JOB_KIND).exists()


def test_another_agents_thread_is_never_its_scope(alice, bob, llm):
    llm.script(entries_answer(FINDING))
    _turn(bob)
    job_run_pending()

    assert alice.get("/api/v1/episodic", {"status": "pending"}).json()["results"] == []
    assert MemoryEntry.objects.get().agent == bob.agent


def test_a_turn_another_worker_holds_is_retried_later_not_dropped(alice, llm):
    from apps.episodic.extraction import ExtractionBusy, turn_extract
    from apps.threads.selectors import thread_get

    llm.script(entries_answer(FINDING))
    thread_id = _turn(alice)
    thread = thread_get(agent=alice.agent, thread_id=thread_id)
    ExtractionRun.objects.create(
        agent=alice.agent, thread=thread, first_seq=1, last_seq=2, model="m", prompt_version="p"
    )

    with pytest.raises(ExtractionBusy):
        turn_extract(thread=thread, last_seq=2)

    ExtractionRun.objects.update(status="failed")  # that worker gave up
    assert turn_extract(thread=thread, last_seq=2).stored == 1
