"""The context of a 300-message tool loop once observational memory has settled."""

from apps.jobs.services import job_run_pending
from tests.context.conftest import block, context
from tests.observations.conftest import configure, fill
from tests.observations.toolloop import error_lines, tool_loop


def test_the_tool_loops_context_fits_its_budget_and_reads_the_same_twice(alice):
    loop = tool_loop()
    configure(alice, observer_message_tokens=2000, reflector_observation_tokens=1500)
    thread = alice.new_thread()["id"]
    fill(alice, thread, loop)  # runs the background work after every batch (extractive: no LLM)

    first = context(alice, thread, query="inventory rate limit", max_tokens=32_000)
    again = context(alice, thread, query="inventory rate limit", max_tokens=32_000)

    assert first["tokens"] <= 32_000
    assert first["system_prompt"] == again["system_prompt"]
    assert first["messages"] == again["messages"]
    assert "observations" not in {w.get("block") for w in first["warnings"]}, first["warnings"]
    observations = block(first, "observations")
    seqs = [item["seq"] for item in observations["items"]]
    assert seqs and seqs[0] == 1 and seqs == sorted(seqs)
    # The messages start right after what the observations hold (or trimming cut older ones).
    covered = int(observations["text"].rsplit("–#", 1)[1].split("]", 1)[0])
    assert first["messages"][0]["seq"] >= covered + 1
    assert first["messages"][-1]["seq"] == len(loop)
    # The errors of the loop survive into what the agent is given.
    shown = first["system_prompt"] + "".join(m["content"] for m in first["messages"])
    assert any(line in shown for line in error_lines(loop))


def test_between_reflections_the_observations_block_only_grows_at_its_end(alice):
    # A stable prefix: a model provider's prompt cache keeps serving what came before, as
    # long as the observations fit (here at 40k tokens; at 32k, recall's 60 matches of this
    # loop leave room for all but one or two of them).
    loop = tool_loop()
    configure(alice, observer_message_tokens=2000, reflector_observation_tokens=1_000_000)
    thread = alice.new_thread()["id"]
    fill(alice, thread, loop[:150])
    before = block(context(alice, thread, query="inventory", max_tokens=40_000), "observations")

    fill(alice, thread, loop[150:])
    after = block(context(alice, thread, query="inventory", max_tokens=40_000), "observations")

    opened = before["text"].splitlines()[:-1]  # all but the closing tag
    assert len(after["items"]) > len(before["items"]) > 0
    assert after["text"].splitlines()[: len(opened)] == opened
    assert after["items"][: len(before["items"])] == before["items"]


def test_a_small_budget_trims_old_observations_and_messages_but_keeps_the_latest(alice):
    loop = tool_loop()
    configure(alice, observer_message_tokens=2000, reflector_observation_tokens=1500)
    thread = alice.new_thread()["id"]
    fill(alice, thread, loop)

    answer = context(alice, thread, query="inventory", max_tokens=3_000)

    assert answer["tokens"] <= 3_000
    assert {w["block"] for w in answer["warnings"]} >= {"observations"}
    assert answer["messages"][-1]["seq"] == len(loop)


def test_observations_that_fill_the_budget_give_way_to_memory_and_knowledge(alice, remember):
    # Entries and knowledge are few and chosen for the query, and keep their own shares of the
    # budget: a long loop's observations cannot push them out.
    remember(alice, "the inventory service rate limit was raised to 50 per second", "ann")
    alice.post("/api/v1/knowledge-bases", {"slug": "ops", "name": "Ops"})
    doc = alice.post(
        "/api/v1/knowledge-bases/ops/documents",
        {"title": "limits", "text": "Inventory rate limit: back off for 30 seconds after a 429."},
    )
    assert doc.status_code == 202, doc.content
    job_run_pending()
    loop = tool_loop()
    # Recall off: what gives way here is between the history and the ranked blocks.
    configure(
        alice,
        observer_message_tokens=2000,
        reflector_observation_tokens=100_000,
        semantic_recall_enabled=False,
    )
    thread = alice.new_thread(resource_id="ann")["id"]
    fill(alice, thread, loop)
    full = context(alice, thread, query="inventory rate limit", max_tokens=100_000)
    assert block(full, "observations")["items"], "the loop should have been observed"

    budget = full["tokens"] - block(full, "observations")["tokens"] // 2
    answer = context(alice, thread, query="inventory rate limit", max_tokens=budget)

    assert answer["tokens"] <= budget
    assert "observations" in {w["block"] for w in answer["warnings"]}, answer["warnings"]
    for name in ("memory", "knowledge"):
        assert block(answer, name)["items"] == block(full, name)["items"]
        assert block(answer, name)["items"] and block(answer, name)["text"]
    kept = block(answer, "observations")["items"]
    assert kept and kept[-1] == block(full, "observations")["items"][-1]  # newest kept
