"""`check --deploy --fail-level WARNING` passes with .env.example's production variables."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _example_variables() -> dict[str, str]:
    variables = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            name, _, value = line.partition("=")
            variables[name] = value
    return variables


def _deploy_check(tmp_path, **overrides) -> subprocess.CompletedProcess:
    # The test run's own switches are not a deployment's (the browser tests allow async-unsafe
    # ORM calls, which the deploy check rightly refuses).
    test_only = {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {key: value for key, value in os.environ.items() if key not in test_only}
    env.update(_example_variables(), DATA_DIR=str(tmp_path), DEBUG="false", **overrides)
    command = [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_it_passes_with_the_production_variables(tmp_path):
    result = _deploy_check(tmp_path)

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize(
    "variable, warning",
    [
        ("SECURE_HSTS_INCLUDE_SUBDOMAINS", "security.W005"),
        ("SECURE_HSTS_PRELOAD", "security.W021"),
        ("SECURE_COOKIES", "security.W012"),
    ],
)
def test_each_hardening_variable_acts(tmp_path, variable, warning):
    result = _deploy_check(tmp_path, **{variable: "false"})

    assert result.returncode == 1
    assert warning in result.stderr


def test_it_warns_when_the_proxy_is_on_but_no_proxy_address_is_trusted(tmp_path):
    result = _deploy_check(tmp_path, TRUSTED_PROXIES="")

    assert result.returncode == 1
    assert "core.W001" in result.stderr and "TRUSTED_PROXIES" in result.stderr


def test_health_and_metrics_answer_over_plain_http_behind_the_redirect(client, db, settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.METRICS_TOKEN = "t"

    assert client.get("/healthz").status_code == 200
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer t").status_code == 200
    assert client.get("/console/login/").status_code == 301


def test_the_make_target_leaves_no_data_folder_behind(tmp_path):
    # `make deploy-check` runs this script; each run used to leave its mktemp -d data folder.
    test_only = {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {key: value for key, value in os.environ.items() if key not in test_only}
    env.update(TMPDIR=str(tmp_path), PYTHON=sys.executable)

    result = subprocess.run(
        ["bash", ".ci/check-deploy"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout
    assert list(tmp_path.iterdir()) == []
