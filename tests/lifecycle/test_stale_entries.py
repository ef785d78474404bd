"""An entry whose source thread is deleted says so, rather than pointing at nothing."""

from apps.episodic.models import MemoryEntry


def test_deleting_a_thread_marks_its_entries_stale_with_the_reason(alice):
    thread = alice.new_thread(resource_id="user-1")
    (message,) = alice.append(thread["id"], {"role": "user", "content": "I moved to Oslo"})
    alice.post(
        "/api/v1/episodic",
        {
            "content": "Lives in Oslo",
            "resource_id": "user-1",
            "thread_id": thread["id"],
            "message_id": message["id"],
            "source": "user_assertion",
            "evidence": "moved to Oslo",
        },
    )
    untouched = alice.post("/api/v1/episodic", {"content": "Likes tea", "resource_id": "user-1"})

    assert alice.delete(f"/api/v1/threads/{thread['id']}").status_code == 204

    entry = MemoryEntry.objects.get(content="Lives in Oslo")
    assert entry.thread is None and entry.message is None
    stale = entry.metadata["stale"]
    assert stale["reason"] == f"source thread {thread['id']} was deleted"
    assert str(stale["message_id"]) == str(message["id"])
    assert "stale" not in MemoryEntry.objects.get(pk=untouched.json()["id"]).metadata
