"""An end user's id has no surrounding whitespace, wherever it is sent (body, path, query)."""

import pytest

from apps.tenancy.models import Resource
from tests.conftest import make_actor
from tests.migrating import migrate


def test_a_path_with_spaces_around_the_id_names_the_same_end_user_as_a_body(alice):
    thread = alice.post("/api/v1/threads", {"resource_id": " ann "}).json()

    put = alice.put("/api/v1/resources/%20ann%20/profile", {"content": "Likes tea.", "version": 0})
    listed = alice.get("/api/v1/threads", {"resource_id": " ann "}).json()["results"]

    assert put.status_code == 200, put.content
    assert put.json()["resource_id"] == "ann"
    assert [t["id"] for t in listed] == [thread["id"]]
    assert list(Resource.objects.values_list("external_id", flat=True)) == ["ann"]


@pytest.mark.parametrize("escaped", ["ann%0A", "%0Aann", "ann%0D%0A", "%09ann"])
def test_a_line_break_or_tab_around_a_path_id_names_the_same_end_user(alice, escaped):
    put = alice.put(f"/api/v1/resources/{escaped}/profile", {"content": "Tea.", "version": 0})
    read = alice.get(f"/api/v1/resources/{escaped}/profile")

    assert put.status_code == 200, put.content
    assert (put.json()["resource_id"], read.json()["content"]) == ("ann", "Tea.")
    assert list(Resource.objects.values_list("external_id", flat=True)) == ["ann"]
    deleted = alice.client.delete(
        f"/api/v1/resources/{escaped}", headers={"Authorization": f"Bearer {alice.key}"}
    )
    assert (deleted.status_code, deleted.json()["resource_id"]) == (200, "ann")


def test_an_id_of_spaces_only_in_a_path_is_refused_naming_it(alice):
    response = alice.put("/api/v1/resources/%20%20/profile", {"content": "x", "version": 0})

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == (
        "resource_id: '  ' is blank; send the end user's id."
    )
    assert not Resource.objects.exists()


@pytest.mark.parametrize(
    "method, path, query",
    [
        ("get", "/api/v1/resources/%20%20/profile", {}),
        ("delete", "/api/v1/resources/%20%20", {}),
        ("get", "/api/v1/threads", {"resource_id": "  "}),
        ("get", "/api/v1/episodic", {"resource_id": "  "}),
    ],
)
def test_reads_refuse_an_id_of_spaces_only_as_writes_do(alice, method, path, query):
    headers = {"Authorization": f"Bearer {alice.key}"}
    if method == "get":
        response = alice.client.get(path, query, headers=headers)
    else:
        response = alice.client.delete(path, headers=headers)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == (
        "resource_id: '  ' is blank; send the end user's id."
    )


@pytest.fixture
def spaced(back_to_latest):
    alice = make_actor("acme", "alice")
    old = migrate([("tenancy", "0003_api_key_scope")])
    OldResource = old.get_model("tenancy", "Resource")
    project = alice.agent.project_id
    made = {
        external_id: OldResource.objects.create(project_id=project, external_id=external_id).pk
        for external_id in [" bob ", "carol\t", "dan", " dan", "  "]
    }
    migrate([("tenancy", "0004_resource_ids_trimmed")])
    return made


def test_the_migration_trims_stored_ids_unless_another_end_user_has_the_trimmed_one(spaced):
    ids = dict(Resource.objects.values_list("pk", "external_id"))

    assert ids[spaced[" bob "]] == "bob"
    assert ids[spaced["carol\t"]] == "carol"
    assert ids[spaced["dan"]] == "dan"
    assert ids[spaced[" dan"]] == " dan"  # "dan" is taken: left for an operator to merge
    assert ids[spaced["  "]] == "  "  # blank once trimmed: left as it is
