"""The client against a live server: the agent loop, pagination, errors and retries."""

import time

import pytest
from memory_console_client import (
    AuthenticationFailed,
    BadRequest,
    Conflict,
    MemoryConsole,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
)

from apps.threads.models import Message
from tests.clients.flaky_proxy import FlakyProxy


def test_the_agent_loop_is_three_calls(mc):
    thread = mc.threads.resolve("telegram", "chat-9", resource_id="ann")
    same = mc.threads.resolve("telegram", "chat-9")
    appended = mc.messages.append(
        thread,
        {"role": "user", "content": "My desk moved to room 4.12"},
        {"role": "assistant", "content": "Noted."},
    )
    context = mc.context(thread, query="where is my desk?", max_tokens=2000)

    assert same["id"] == thread["id"] and thread["resource_id"] == "ann"
    assert [m["seq"] for m in appended] == [1, 2]
    assert context["thread_id"] == thread["id"] and context["max_tokens"] == 2000
    assert [(m["role"], m["content"]) for m in context["messages"]] == [
        ("user", "My desk moved to room 4.12"),
        ("assistant", "Noted."),
    ]
    assert [b["name"] for b in context["blocks"]][-1] == "recent"
    again = mc.context(thread)
    given = [c["id"] for c in mc.contexts.list(thread, page_size=1)]
    assert given == [again["context_id"], context["context_id"]]
    assert mc.contexts.get(context["context_id"])["system_prompt"] == context["system_prompt"]


def test_resolving_a_chat_of_another_end_user_raises_conflict_with_the_threads_values(mc):
    thread = mc.threads.resolve("telegram", "chat-3", resource_id="ann", title="Ann")

    with pytest.raises(Conflict) as raised:
        mc.threads.resolve("telegram", "chat-3", resource_id="bob")

    assert raised.value.details == {"thread_id": thread["id"], "held": {"resource_id": "ann"}}
    assert mc.threads.resolve("telegram", "chat-3", title="Ann")["id"] == thread["id"]


def test_runs_entries_search_and_tools_go_through_the_client(mc):
    run = mc.runs.open("cli", "t-1", name="session")
    mc.messages.append(run["thread_id"], {"role": "user", "content": "the cobalt key is blue"})
    finished = mc.runs.finish(run, summary="done")
    entry = mc.entries.create("Ann likes cobalt", resource_id="ann")
    edited = mc.entries.update(entry, content="Ann likes cobalt blue", version=entry["version"])
    hits = mc.search("cobalt", scopes=["messages"], thread=run["thread_id"])
    tools = [tool["function"]["name"] for tool in mc.tools.list()]

    assert run["thread_created"] is True
    assert finished["status"] == "succeeded" and mc.runs.get(run)["summary"] == "done"
    assert edited["content"] == "Ann likes cobalt blue"
    assert [hit["content"] for hit in hits] == ["the cobalt key is blue"]
    assert "recall_memory" in tools
    mc.entries.delete(entry)
    with pytest.raises(NotFound):
        mc.entries.get(entry)


def test_lists_are_iterated_across_pages(mc):
    made = [mc.threads.resolve("web", f"chat-{n}")["id"] for n in range(7)]
    thread = made[0]
    mc.messages.append(thread, *({"role": "user", "content": f"m{n}"} for n in range(8)))
    for n in range(3):
        mc.entries.create(f"fact {n}")

    threads = [t["id"] for t in mc.threads.list(page_size=2)]
    messages = [m["content"] for m in mc.messages.list(thread, page_size=3)]
    later = [m["seq"] for m in mc.messages.list(thread, after_seq=5, page_size=2)]
    entries = [e["content"] for e in mc.entries.list(page_size=1)]

    assert threads == made[::-1]  # newest first, 4 pages
    assert messages == [f"m{n}" for n in range(8)]
    assert later == [6, 7, 8]
    assert sorted(entries) == ["fact 0", "fact 1", "fact 2"]
    assert [m["content"] for m in mc.messages.latest(thread, 2)] == ["m6", "m7"]


def test_errors_carry_the_apis_code_and_details(mc, live_server):
    thread = mc.threads.resolve("web", "x")

    with pytest.raises(BadRequest) as bad:
        mc.messages.append(thread, {"role": "robot", "content": "hi"})
    with pytest.raises(NotFound) as missing:
        mc.threads.get("00000000-0000-7000-8000-000000000000")
    with pytest.raises(PermissionDenied) as denied:
        mc.config.update({"recent_window": 3}, version=0)
    stranger = MemoryConsole(live_server.url, "mc_aaaaaaaaaa_wrong")
    with stranger, pytest.raises(AuthenticationFailed) as unknown:
        stranger.threads.get(thread)

    assert bad.value.status == 400 and bad.value.code == "invalid"
    assert bad.value.message.startswith("messages[0].role:")
    assert bad.value.details == {"messages": {"0": {"role": ['"robot" is not a valid choice.']}}}
    assert (missing.value.status, missing.value.code) == (404, "not_found")
    assert (denied.value.status, denied.value.code) == (403, "permission_denied")
    assert unknown.value.status == 401 and "Unknown API key" in unknown.value.message


def test_an_admin_key_changes_a_setting_and_the_next_context_shows_it(mc, mc_admin):
    thread = mc.threads.resolve("web", "admin")
    mc.messages.append(thread, *({"role": "user", "content": f"turn {n}"} for n in range(5)))
    level = mc_admin.config.level("agent")

    changed = mc_admin.config.update(
        {"context_strategy": "none", "recent_window": 1}, version=level["version"], level="agent"
    )
    with pytest.raises(Conflict) as stale:
        mc_admin.config.update({"recent_window": 3}, version=level["version"], level="agent")

    assert changed["version"] == level["version"] + 1
    assert [m["content"] for m in mc.context(thread)["messages"]] == ["turn 4"]
    assert stale.value.code == "stale_version"
    assert stale.value.details == {"current_version": changed["version"]}
    assert [v["version"] for v in mc_admin.config.versions("agent")] == [1]
    mc_admin.config.rollback(0, "agent")
    assert len(mc.context(thread)["messages"]) == 5


@pytest.fixture
def proxy(live_server):
    proxy = FlakyProxy(live_server.url)
    yield proxy
    proxy.close()


def test_it_retries_429_and_503_after_their_retry_after(alice_live, proxy):
    proxy.fail_next((429, "0.2"), (503, "0.1"))
    with MemoryConsole(proxy.url, alice_live.key, backoff=0.01) as client:
        thread = client.threads.resolve("web", "retry")

    times = [at for _, _, at in proxy.seen]
    assert len(times) == 3 and thread["external_id"] == "retry"
    assert times[1] - times[0] >= 0.2 and times[2] - times[1] >= 0.1


def test_a_retried_append_is_stored_once(alice_live, proxy):
    with MemoryConsole(proxy.url, alice_live.key, backoff=0.01) as client:
        thread = client.threads.resolve("web", "once")
        proxy.fail_next((502, None))
        client.messages.append(thread, {"role": "user", "content": "hello"})

    assert len(proxy.seen) == 3
    assert list(Message.objects.values_list("content", flat=True)) == ["hello"]


def test_a_5xx_on_a_write_that_is_not_safe_to_repeat_is_raised(alice_live, proxy):
    proxy.fail_next((500, None))
    client = MemoryConsole(proxy.url, alice_live.key, backoff=0.01)
    with client, pytest.raises(ServerError) as failed:
        client.runs.open("web", "r")

    assert failed.value.status == 500 and failed.value.code == "flaky"
    assert len(proxy.seen) == 1


def test_it_gives_up_after_max_retries(alice_live, proxy):
    proxy.fail_next(*[(503, "0")] * 3)
    client = MemoryConsole(proxy.url, alice_live.key, max_retries=2, backoff=0.01)
    with client, pytest.raises(ServerError):
        next(client.threads.list())

    assert len(proxy.seen) == 3


def test_the_servers_own_rate_limit_is_raised_with_its_retry_after(
    alice_live, live_server, settings
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"api_key": "2/min"},
    }
    started = time.monotonic()
    with MemoryConsole(live_server.url, alice_live.key, max_wait=1) as client:
        client.config.get()
        client.config.get()
        with pytest.raises(RateLimited) as limited:
            client.config.get()

    assert limited.value.status == 429 and limited.value.code == "throttled"
    assert limited.value.retry_after > 1  # longer than max_wait: raised, not waited for
    assert time.monotonic() - started < 5
