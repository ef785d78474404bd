"""docker/compose.yaml, docker/Dockerfile and .env.example, checked without a Docker engine."""

import json
import os
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
# Debian's docker-compose package ships the Compose specification's JSON schema;
# .ci/validate-compose installs it and runs `docker-compose config -q` too.
SCHEMA = Path("/usr/lib/python3/dist-packages/compose/config/compose_spec.json")
APP_SERVICES = ("web", "worker", "beat")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())


def test_it_matches_the_compose_specification_schema(compose):
    if not SCHEMA.exists():
        pytest.skip("Debian's docker-compose is not installed (.ci/validate-compose installs it)")
    import jsonschema

    jsonschema.Draft201909Validator(json.loads(SCHEMA.read_text())).validate(compose)


def test_the_schema_check_catches_a_misspelt_condition(compose):
    if not SCHEMA.exists():
        pytest.skip("Debian's docker-compose is not installed (.ci/validate-compose installs it)")
    import jsonschema

    broken = json.loads(json.dumps(compose))
    broken["services"]["web"]["depends_on"]["migrate"]["condition"] = "service_finished"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft201909Validator(json.loads(SCHEMA.read_text())).validate(broken)


def test_migrations_run_once_before_web_worker_and_beat(compose):
    services = compose["services"]
    assert services["migrate"]["command"][-2:] == ["migrate", "--noinput"]
    assert services["migrate"]["restart"] == "no"
    for name in APP_SERVICES:
        assert "migrate" not in " ".join(map(str, services[name]["command"]))
        condition = services[name]["depends_on"]["migrate"]["condition"]
        assert condition == "service_completed_successfully", name


def test_web_worker_and_beat_share_one_named_volume_for_data(compose):
    services = compose["services"]
    mounts = {name: services[name]["volumes"] for name in (*APP_SERVICES, "migrate")}
    assert all(volumes == ["data:/data"] for volumes in mounts.values()), mounts
    assert "data" in compose["volumes"]


def test_the_web_port_is_published_on_loopback_unless_told_otherwise(compose):
    # Reachable from anywhere, callers could go around the TLS proxy to the port.
    (published,) = compose["services"]["web"]["ports"]
    with_defaults = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", published)

    assert with_defaults == "127.0.0.1:8000:8000"
    assert "# WEB_BIND=127.0.0.1" in (ROOT / ".env.example").read_text()


def test_web_and_worker_have_health_checks(compose):
    services = compose["services"]
    assert services["web"]["healthcheck"]["test"][-1] == "web"
    assert services["worker"]["healthcheck"]["test"][-1] == "worker"
    script = (ROOT / "docker" / "healthcheck.py").read_text()
    assert "/healthz" in script and "inspect" in script


def test_the_image_runs_as_a_user_and_collects_static_files_at_build():
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    users = re.findall(r"^USER (\S+)", dockerfile, re.MULTILINE)
    assert users and users[-1] not in {"root", "0"}
    assert re.search(r"^RUN .*collectstatic", dockerfile, re.MULTILINE)
    # Collected into the image, not into the data volume that would hide a newer image's files.
    assert "STATIC_ROOT=/app/" in dockerfile


def test_env_example_names_every_variable_the_settings_read():
    settings_source = (ROOT / "memory_console" / "settings.py").read_text()
    read = set(re.findall(r'env_(?:str|int|float|bool|list)\(\s*"([A-Z0-9_]+)"', settings_source))
    example = (ROOT / ".env.example").read_text()
    named = set(re.findall(r"^#? ?([A-Z0-9_]+)=", example, re.MULTILINE))
    assert read, "no env_* reads found in settings.py"
    assert read - named == set()


def test_there_is_one_env_example_the_one_the_deploy_check_uses():
    # A second, older example (docker/.env.example) drifted from the settings and failed the
    # deploy check; the compose file and the README point at the root one.
    skipped = {".git", ".venv", "data", "node_modules", "__pycache__"}
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if name not in skipped]
        found += [Path(folder, name) for name in files if name.endswith(".env.example")]
    assert found == [ROOT / ".env.example"]
