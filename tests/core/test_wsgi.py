import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LOAD = """
import gc, json, sys
import memory_console.wsgi as wsgi
views = ("apps.api.v1.search", "apps.console.views.threads")
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "views_loaded": all(name in sys.modules for name in views),
    "callable": callable(wsgi.application),
}))
"""


def test_a_worker_loads_every_view_then_freezes_them_out_of_the_collector(tmp_path):
    env = {**os.environ, "DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "tests.settings"}

    result = subprocess.run(
        [sys.executable, "-c", LOAD], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )

    loaded = json.loads(result.stdout)
    assert loaded["views_loaded"] and loaded["callable"]
    assert loaded["frozen"] > 10_000  # Django and the apps, not a handful of objects
