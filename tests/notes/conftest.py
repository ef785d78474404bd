def write(actor, path, content="", *, scope="personal", expect=201, **fields):
    """Create a note through the API and return its answer."""
    response = actor.post(
        "/api/v1/notes", {"path": path, "content": content, "scope": scope, **fields}
    )
    assert response.status_code == expect, response.content
    return response.json()


def listed(actor, **params) -> list[str]:
    response = actor.get("/api/v1/notes", params)
    assert response.status_code == 200, response.content
    return [note["path"] for note in response.json()["results"]]
