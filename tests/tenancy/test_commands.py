from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.memconfig.selectors import config_effective
from apps.tenancy.models import Agent, ApiKey, Project


def _run(*args) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip().splitlines()


def test_create_agent_creates_what_is_missing_and_prints_the_key_last(client, db):
    lines = _run("create_agent", "--project", "shop", "--agent", "helper")
    again = _run("create_agent", "--project", "shop", "--agent", "helper")

    key = lines[-1]
    assert Project.objects.filter(slug="shop").count() == 1
    assert Agent.objects.filter(slug="helper").count() == 1
    assert ApiKey.objects.count() == 2
    assert again[-1] != key
    response = client.get("/api/v1/config", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.json()["agent"] == "helper"


def test_create_agent_refuses_a_slug_that_is_not_one(db):
    with pytest.raises(CommandError, match="not a slug"):
        _run("create_agent", "--project", "My Shop", "--agent", "helper")


def test_bootstrap_demo_revokes_the_previous_demo_key(client, db):
    first = _run("bootstrap_demo")
    second = _run("bootstrap_demo")

    def key_of(lines):
        return next(line.strip() for line in lines if line.strip().startswith("mc_"))

    old, new = key_of(first), key_of(second)
    assert any("Operator login created: admin / " in line for line in first)
    assert any("exists" in line for line in second)
    assert any(".venv/bin/python manage.py changepassword admin" in line for line in second)
    # It says where the console is, and that the key lasts until the next start.
    assert any("/console/ (log in as admin)" in line for line in second)
    assert any("valid until the next `make run`" in line for line in second)
    assert client.get("/api/v1/config", HTTP_AUTHORIZATION=f"Bearer {old}").status_code == 401
    assert client.get("/api/v1/config", HTTP_AUTHORIZATION=f"Bearer {new}").status_code == 200


def test_bootstrap_demo_gives_the_demo_project_the_local_embedder_until_one_is_chosen(db):
    lines = _run("bootstrap_demo")
    demo = Project.objects.get(slug="demo")
    agent = Agent.objects.get(project=demo, slug="demo-agent")

    effective = config_effective(agent=agent)
    assert (effective["embedder_model"], effective["embedder_dimensions"]) == (
        "local:minilm-onnx",
        384,
    )
    assert any("memory_config --project demo --set embedder_model=" in line for line in lines)

    # An operator turns vectors off: the next start leaves that choice alone.
    _run("memory_config", "--project", "demo", "--set", "embedder_model=")
    _run("bootstrap_demo")
    assert config_effective(agent=agent)["embedder_model"] == ""


def test_the_admin_action_revokes_keys(admin_client, alice):
    api_key = ApiKey.objects.get(agent=alice.agent)

    admin_client.post(
        "/admin/tenancy/apikey/",
        {"action": "revoke", "_selected_action": [str(api_key.pk)]},
    )

    assert alice.get("/api/v1/config").status_code == 401
