"""Named actors and factories shared by every test.

acme is a project with two agents, alice and bob; globex is another project with carol.
Alice is the usual caller; bob and carol are the outsiders whose data she must never see.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from rest_framework.test import APIClient

from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.providers.fake_openai import FakeOpenAIServer
from apps.tenancy.models import Agent
from apps.tenancy.services import agent_get_or_create, api_key_issue, project_get_or_create


@dataclass
class Actor:
    agent: Agent
    key: str
    client: APIClient

    def post(self, path, body=None, **kwargs):
        return self.client.post(path, body, format="json", **kwargs)

    def put(self, path, body=None, **kwargs):
        return self.client.put(path, body, format="json", **kwargs)

    def patch(self, path, body=None, **kwargs):
        return self.client.patch(path, body, format="json", **kwargs)

    def get(self, path, params=None, **kwargs):
        return self.client.get(path, params, **kwargs)

    def delete(self, path, **kwargs):
        return self.client.delete(path, **kwargs)

    def upload(self, path, name: str, content: bytes, **fields):
        from django.core.files.uploadedfile import SimpleUploadedFile

        body = {"file": SimpleUploadedFile(name, content), **fields}
        return self.client.post(path, body, format="multipart")

    def new_thread(self, **fields) -> dict:
        response = self.post("/api/v1/threads", fields)
        assert response.status_code in (200, 201), response.content
        return response.json()

    def append(self, thread_id, *messages, expect=(201, 200)) -> list[dict]:
        response = self.post(f"/api/v1/threads/{thread_id}/messages", {"messages": list(messages)})
        assert response.status_code in expect, response.content
        return response.json()["messages"]


@contextmanager
def recorded_sql() -> Iterator[list[str]]:
    """Yield a list that receives the SQL of every statement run inside the block (each still
    runs as usual)."""
    statements: list[str] = []

    def record(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield statements


def make_actor(project_slug: str, agent_slug: str) -> Actor:
    project, _ = project_get_or_create(slug=project_slug)
    agent, _ = agent_get_or_create(project=project, slug=agent_slug)
    key = api_key_issue(agent=agent).secret
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return Actor(agent=agent, key=key, client=client)


@pytest.fixture
def alice(db) -> Actor:
    return make_actor("acme", "alice")


@pytest.fixture
def bob(db) -> Actor:
    return make_actor("acme", "bob")


@pytest.fixture
def carol(db) -> Actor:
    return make_actor("globex", "carol")


@pytest.fixture
def anonymous() -> APIClient:
    return APIClient()


@pytest.fixture
def back_to_latest(transactional_db):
    """Migrate the database forward to the latest migrations after a data migration's test."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def use_embedder(db):
    """Configure a project's embedder and return a function that runs the vector jobs."""

    def configure(actor, model="builtin-hash", dims=64):
        config_update(
            project=actor.agent.project,
            changes={"embedder_model": model, "embedder_dimensions": dims},
            changed_by="test",
        )
        return job_run_pending

    return configure


@pytest.fixture
def fake_openai():
    """A server on loopback that speaks the OpenAI API; tests script its answers."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def llm(fake_openai, settings):
    """Point the providers at the fake server, without retries: every failure shows at once."""
    settings.OPENAI_BASE_URL = fake_openai.base_url
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_MAX_RETRIES = 0
    return fake_openai


@pytest.fixture(scope="session")
def written_schema(tmp_path_factory, django_db_blocker) -> dict:
    """The OpenAPI schema as `manage.py spectacular` writes it, read back."""
    path = tmp_path_factory.mktemp("schema") / "schema.json"
    with django_db_blocker.unblock():
        call_command("spectacular", "--format", "openapi-json", "--file", str(path))
    return json.loads(path.read_text())
