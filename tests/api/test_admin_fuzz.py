"""Schemathesis fuzzes the project-admin operations with an admin key: no 5xx, and every
answer within its documented schema (tests/reliability fuzzes the rest with an agent key,
which these operations answer 403)."""

import subprocess

from apps.tenancy.services import api_key_issue
from tests.conftest import make_actor
from tests.reliability.test_api_schema import CLI


def test_every_admin_operation_answers_within_its_schema_and_never_5xx(
    live_server, tmp_path, settings
):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    actor = make_actor("fuzz", "fuzzer")
    key = api_key_issue(agent=actor.agent, scope="admin").secret
    admin = actor.client
    admin.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    webhook = admin.post(
        "/api/v1/webhooks", {"name": "NOTIFY", "url": "http://127.0.0.1:9/x"}, format="json"
    ).json()
    (tmp_path / "schemathesis.toml").write_text(
        f'[parameters]\n"path.webhook_id" = "{webhook["id"]}"\n'
    )

    done = subprocess.run(
        [
            str(CLI),
            "--config-file",
            str(tmp_path / "schemathesis.toml"),
            "run",
            f"{live_server.url}/api/schema/?format=json",
            "--header",
            f"Authorization: Bearer {key}",
            "--include-operation-id-regex",
            "^admin_",
            "--checks",
            "not_a_server_error,response_schema_conformance",
            "--phases",
            "examples,fuzzing",
            "--max-examples",
            "8",
            "--seed",
            "17",
            "--no-shrink",
            "--workers",
            "1",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )

    summary = done.stdout[-6000:]
    print(summary)
    assert done.returncode == 0, summary
    assert "Tested: 11" in summary and " 0 passed" not in summary, summary
