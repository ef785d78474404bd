"""Every operation of the schema that takes an object id answers 404 for another agent's object.

The matrix is generated from the OpenAPI schema: a new endpoint is covered without editing
this test, as long as its path parameters name objects the fixture below knows how to make.
"""

import pytest
from django.apps import apps
from django.core import serializers
from rest_framework.test import APIClient

from tests.api.openapi import example_body, fill_path, operations, path_params
from tests.conftest import make_actor

# Objects a project shares among its agents: only another project's agent must get a 404.
PROJECT_SCOPED = {"kb_slug", "document_id"}
# Operations on the caller's own object under an end user the project shares (resource_id is the
# caller's own name for one): another agent of the project reads its own, empty profile there, and
# any agent's PUT writes its own profile, creating the end user in its own project.
# tests/profiles checks that neither reads nor touches the victim's profile.
CALLERS_OWN_UNDER_SHARED_NAME = {
    ("get", "/api/v1/resources/{resource_id}/profile"): {"acme"},
    ("put", "/api/v1/resources/{resource_id}/profile"): {"acme", "globex"},
}
# Rows of tables that change on every authenticated request, whoever the caller is.
VOLATILE_MODELS = {"tenancy.apikey"}
OUR_APPS = (
    "tenancy",
    "threads",
    "runstate",
    "memconfig",
    "episodic",
    "profiles",
    "observations",
    "context",
    "knowledge",
    "notes",
    "search",
    "jobs",
)


def _schema() -> dict:
    return APIClient().get("/api/schema/", {"format": "json"}).json()


def _victim_objects(victim) -> dict[str, str]:
    """Make one of every object of the victim that a path parameter can name."""
    thread = victim.new_thread(resource_id="victim-user", channel="web", external_id="v1")
    victim.append(thread["id"], {"role": "user", "content": "victim's secret"})
    run = victim.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    victim.put(f"/api/v1/threads/{thread['id']}/plan", {"version": 0, "goal": "secret goal"})
    victim.put(
        f"/api/v1/threads/{thread['id']}/session-memory", {"version": 0, "objective": "secret"}
    )
    victim.put("/api/v1/resources/victim-user/profile", {"version": 0, "content": "secret"})
    victim.post(f"/api/v1/threads/{thread['id']}/iterations", {"task": "t", "outcome": "failed"})
    checkpoint = victim.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {"s": 1}}).json()
    victim.put(f"/api/v1/runs/{run['id']}/snapshot", {"tree": {"root": 1}})
    artifact = victim.post(
        f"/api/v1/runs/{run['id']}/artifacts", {"name": "secret.md", "content": "secret"}
    ).json()
    entry = victim.post(
        "/api/v1/episodic", {"content": "victim's note", "resource_id": "victim-user"}
    )
    victim.post("/api/v1/knowledge-bases", {"slug": "victim-kb"})
    document = victim.post(
        "/api/v1/knowledge-bases/victim-kb/documents", {"title": "t", "text": "victim's manual"}
    )
    # A personal note: another agent of the project must not see it either.
    note = victim.post("/api/v1/notes", {"path": "victim/secret.md", "content": "secret"})
    given = victim.post(f"/api/v1/threads/{thread['id']}/context", {}).json()
    return {
        "context_id": given["context_id"],
        "context_a": given["context_id"],
        "context_b": given["context_id"],
        "kb_slug": "victim-kb",
        "document_id": document.json()["id"],
        "entry_id": entry.json()["id"],
        "note_id": note.json()["id"],
        "thread_id": thread["id"],
        "run_id": run["id"],
        "checkpoint_id": checkpoint["id"],
        "artifact_id": artifact["id"],
        "resource_id": "victim-user",
    }


def _dump() -> str:
    models = [
        model
        for app in OUR_APPS
        for model in apps.get_app_config(app).get_models()
        if model._meta.label_lower not in VOLATILE_MODELS
    ]
    return "".join(serializers.serialize("json", model.objects.order_by("pk")) for model in models)


def _agent_operations(schema: dict):
    """The operations an agent key may call: the project-admin ones (admin_*) answer it 403,
    and an admin key of another project gets 404 (tests/api/test_admin_api.py)."""
    for method, path, operation in operations(schema):
        if not operation["operationId"].startswith("admin_"):
            yield method, path, operation


def _call(actor, method: str, url: str, body):
    return getattr(actor.client, method)(url, body, format="json")


def test_the_schema_has_operations_on_objects(db):
    with_ids = [path for _, path, _ in operations(_schema()) if path_params(path)]

    assert len(with_ids) >= 10


@pytest.mark.parametrize(
    "attacker_project", ["acme", "globex"], ids=["same-project", "other-project"]
)
def test_another_agents_objects_answer_404_and_stay_unchanged(db, attacker_project):
    victim = make_actor("acme", "bob")
    attacker = make_actor(attacker_project, "mallory")
    objects = _victim_objects(victim)
    schema = _schema()
    checked = []
    before = _dump()

    for method, path, operation in _agent_operations(schema):
        params = path_params(path)
        if not params:
            continue
        unknown = set(params) - set(objects)
        assert not unknown, f"{method.upper()} {path}: teach _victim_objects to make {unknown}"
        if attacker_project == "acme" and PROJECT_SCOPED & set(params):
            continue  # the same project's agents share it
        if attacker_project in CALLERS_OWN_UNDER_SHARED_NAME.get((method, path), ()):
            continue
        url = fill_path(path, objects)
        body = example_body(schema, operation)

        response = _call(attacker, method, url, body)

        assert response.status_code == 404, f"{method.upper()} {path} → {response.status_code}"
        assert response.json()["error"]["code"] == "not_found"
        checked.append(f"{method} {path}")

    assert _dump() == before, "an outsider's request changed the victim's data"
    for method, path, _ in _agent_operations(schema):
        if method == "get" and path_params(path):
            assert victim.get(fill_path(path, objects)).status_code == 200, path
    assert len(checked) >= 10


def test_lists_show_only_the_callers_own_threads(alice, bob, carol):
    mine = alice.new_thread(title="mine")
    bob.new_thread(title="bob's")
    carol.new_thread(title="carol's")

    listed = alice.get("/api/v1/threads").json()["results"]

    assert [thread["id"] for thread in listed] == [mine["id"]]


def test_resolving_by_external_id_never_returns_another_agents_thread(alice, carol):
    theirs = carol.new_thread(channel="telegram", external_id="7")

    mine = alice.post("/api/v1/threads", {"channel": "telegram", "external_id": "7"})

    assert mine.status_code == 201
    assert mine.json()["id"] != theirs["id"]
