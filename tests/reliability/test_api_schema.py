"""Schemathesis fuzzes every operation of /api/schema/ against the live test server.

Each operation gets a few generated requests (MAX_EXAMPLES) with an agent's key, path ids that
name real objects of that agent (so the requests reach the code behind the 404s), and two
checks: no 5xx, and every answer matches its documented schema. A fixed seed keeps CI runs
repeatable; `SCHEMATHESIS_EXAMPLES=50 pytest tests/reliability/test_api_schema.py` runs longer.
"""

import os
import subprocess
import sys
from pathlib import Path

from apps.jobs.services import job_run_pending
from tests.conftest import make_actor

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "4"))
CLI = Path(sys.executable).with_name("schemathesis")


def _real_ids(actor, n: int) -> dict[str, str]:
    """Create one object of each kind the paths name, and return their ids by parameter."""
    user, kb = f"user-{n}", f"ops-{n}"
    thread = actor.new_thread(resource_id=user)
    run = actor.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    actor.append(thread["id"], {"role": "user", "content": "the boiler leaks"})
    checkpoint = actor.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {"s": 1}}).json()
    entry = actor.post("/api/v1/episodic", {"content": f"Has boiler {n}", "resource_id": user})
    note = actor.post("/api/v1/notes", {"path": f"ops/boiler-{n}.md", "content": "Boilers leak"})
    actor.post("/api/v1/knowledge-bases", {"slug": kb})
    document = actor.post(
        f"/api/v1/knowledge-bases/{kb}/documents", {"title": "Runbook", "text": f"Restart {n}."}
    )
    first = actor.post(f"/api/v1/threads/{thread['id']}/context", {}).json()
    second = actor.post(f"/api/v1/threads/{thread['id']}/context", {}).json()
    job_run_pending()
    return {
        "thread_id": thread["id"],
        "run_id": run["id"],
        "checkpoint_id": checkpoint["id"],
        "entry_id": entry.json()["id"],
        "note_id": note.json()["id"],
        "kb_slug": kb,
        "document_id": document.json()["id"],
        "resource_id": user,
        "context_a": first["context_id"],
        "context_b": second["context_id"],
    }


def _toml(ids: dict[str, str]) -> str:
    return "".join(f'"path.{name}" = "{value}"\n' for name, value in ids.items())


def test_every_operation_answers_within_its_schema_and_never_5xx(live_server, tmp_path):
    actor = make_actor("fuzz", "fuzzer")
    # DELETE operations get objects of their own, or they would delete the others' early.
    kept, deleted = _real_ids(actor, 1), _real_ids(actor, 2)
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        f"[parameters]\n{_toml(kept)}\n"
        f'[[operations]]\ninclude-method = "DELETE"\n[operations.parameters]\n{_toml(deleted)}'
    )

    done = subprocess.run(
        [
            str(CLI),
            "--config-file",
            str(config),
            "run",
            f"{live_server.url}/api/schema/?format=json",
            "--header",
            f"Authorization: Bearer {actor.key}",
            "--checks",
            "not_a_server_error,response_schema_conformance",
            "--phases",
            "examples,fuzzing",
            "--max-examples",
            str(MAX_EXAMPLES),
            "--seed",
            "17",
            "--no-shrink",
            "--workers",
            "1",
        ],
        cwd=tmp_path,  # its cache folder goes there, not into the checkout
        capture_output=True,
        text=True,
        timeout=600,
    )

    summary = done.stdout[-6000:]
    print(summary)  # the counts, for a longer run's report (pytest -rA or -s shows them)
    assert done.returncode == 0, summary
    assert "0 passed" not in summary and " passed" in summary, summary


def test_a_request_body_the_api_refuses_extra_fields_in_says_so(client, alice):
    schema = client.get("/api/schema/?format=json").json()["components"]["schemas"]
    thread = alice.new_thread()

    refused = alice.post(
        f"/api/v1/threads/{thread['id']}/messages",
        {"messages": [{"role": "user", "content": "hi", "colour": "red"}]},
    )

    assert refused.status_code == 400 and "colour" in refused.content.decode()
    assert schema["MessageInRequest"]["additionalProperties"] is False
    assert schema["MessageAppendRequest"]["additionalProperties"] is False
    assert "additionalProperties" not in schema["Message"]  # answers may grow new fields
