"""Who approves what: each source's approval rule decides the status its new entries start with."""

import pytest

from apps.core.errors import ApplicationError
from apps.episodic.approval import ORIGINS, entry_origin
from apps.episodic.consolidation import thread_consolidate_now
from apps.episodic.models import MemoryEntry
from apps.jobs.services import job_run_pending
from apps.threads.models import Thread
from tests.episodic.conftest import configure, entries_answer

RULES = {origin: setting for origin, (setting, _) in ORIGINS.items() if setting}
SAID = "I always fly with Lufthansa and prefer an aisle seat near the front."


def rules_with(origin: str, rule: str) -> dict:
    """This origin's rule set to `rule`, every other origin's to the opposite one."""
    other = "automatic" if rule == "moderator" else "moderator"
    return {setting: rule if key == origin else other for key, setting in RULES.items()}


def write_from_agent(actor, llm) -> MemoryEntry:
    thread = actor.new_thread(resource_id="ann")
    actor.append(thread["id"], {"role": "user", "content": SAID})
    response = actor.post(
        "/api/v1/episodic",
        {
            "content": "Ann prefers an aisle seat near the front.",
            "source": "user_assertion",
            "evidence": "prefer an aisle seat near the front",
            "thread_id": thread["id"],
            "resource_id": "ann",
        },
    )
    assert response.status_code == 201, response.content
    return MemoryEntry.objects.get(pk=response.json()["id"])


def write_from_api(actor, llm) -> MemoryEntry:
    response = actor.post(
        "/api/v1/episodic", {"content": "Ann's account tier is gold.", "resource_id": "ann"}
    )
    assert response.status_code == 201, response.content
    return MemoryEntry.objects.get(pk=response.json()["id"])


def write_from_extraction(actor, llm) -> MemoryEntry:
    proposal = {
        "content": "Ann always flies with Lufthansa.",
        "source": "user_assertion",
        "evidence": "I always fly with Lufthansa",
    }
    llm.script(entries_answer(proposal))
    thread = actor.new_thread(resource_id="ann")
    actor.append(
        thread["id"],
        {"role": "user", "content": SAID},
        {"role": "assistant", "content": "Noted, I will book Lufthansa aisle seats."},
    )
    job_run_pending()
    return MemoryEntry.objects.get(extraction__isnull=False)


def write_from_memory_action(actor, llm) -> MemoryEntry:
    thread = actor.new_thread(resource_id="ann")
    actor.append(
        thread["id"],
        {"role": "assistant", "content": "Booked. [[MEMORY: Ann flies LH 400 on Fridays]]"},
    )
    job_run_pending()
    return MemoryEntry.objects.get(source="memory_action")


def write_from_consolidation(actor, llm) -> MemoryEntry:
    configure(actor, episodic_extraction_enabled=False)
    thread = actor.new_thread(resource_id="ann")
    messages = [{"role": "user", "content": f"{SAID} Booking reference LH-{n}."} for n in range(3)]
    messages += [{"role": "assistant", "content": "ok"}] * 12
    actor.append(thread["id"], *messages)
    thread_consolidate_now(thread=Thread.objects.get(pk=thread["id"]))
    return MemoryEntry.objects.filter(source="consolidation").first()


WRITERS = {
    "agent": write_from_agent,
    "api": write_from_api,
    "extraction": write_from_extraction,
    "memory_action": write_from_memory_action,
    "consolidation": write_from_consolidation,
}


def test_every_rule_has_a_writer_under_test():
    assert set(WRITERS) == set(RULES)


@pytest.mark.parametrize("rule, status", [("moderator", "pending"), ("automatic", "approved")])
@pytest.mark.parametrize("origin", sorted(WRITERS))
def test_a_new_entry_starts_as_its_sources_rule_says(alice, request, origin, rule, status):
    # Only extraction needs a model; elsewhere none is configured, so nothing else writes.
    llm = request.getfixturevalue("llm") if origin == "extraction" else None
    configure(alice, **rules_with(origin, rule))

    entry = WRITERS[origin](alice, llm)

    assert entry is not None
    assert entry_origin(source=entry.source, extraction=entry.extraction) == origin
    assert entry.status == status
    assert bool(entry.status_changed_by) == (status == "approved")


def test_approval_off_approves_every_source_whatever_its_rule(alice):
    configure(alice, episodic_approval_required=False, **rules_with("api", "moderator"))

    assert write_from_api(alice, None).status == "approved"


def test_an_automatic_entry_reaches_recall_at_once(alice):
    configure(alice, episodic_approval_api="automatic")
    write_from_api(alice, None)

    found = alice.post("/api/v1/episodic/recall", {"query": "account tier gold"}).json()

    assert [r["content"] for r in found["results"]] == ["Ann's account tier is gold."]


def test_a_rule_accepts_only_its_two_values_and_the_api_shows_it(alice):
    values = alice.get("/api/v1/config").json()["values"]
    assert values["episodic_approval_consolidation"] == "moderator"
    with pytest.raises(ApplicationError, match="must be one of moderator, automatic"):
        configure(alice, episodic_approval_consolidation="sometimes")


def test_the_api_lists_entries_by_origin_and_names_an_unknown_one(alice):
    write_from_api(alice, None)
    write_from_agent(alice, None)

    by_api = alice.get("/api/v1/episodic", {"origin": "api"}).json()["results"]
    by_agent = alice.get("/api/v1/episodic", {"origin": "agent"}).json()["results"]
    unknown = alice.get("/api/v1/episodic", {"origin": "rumour"})

    assert [e["content"] for e in by_api] == ["Ann's account tier is gold."]
    assert [e["content"] for e in by_agent] == ["Ann prefers an aisle seat near the front."]
    assert unknown.status_code == 400
    assert "origin" in unknown.json()["error"]["details"]
