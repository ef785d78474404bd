"""Container health checks: `web` asks /healthz, `worker` pings this container's Celery worker.

Exits 0 when healthy, 1 otherwise, as Docker's HEALTHCHECK expects.
"""

import os
import socket
import subprocess
import sys
import urllib.request


def web() -> bool:
    # Django answers only the hosts it serves: ask as the first of them.
    host = os.environ.get("ALLOWED_HOSTS", "localhost").split(",")[0].strip().lstrip(".")
    request = urllib.request.Request("http://127.0.0.1:8000/healthz", headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def worker() -> bool:
    command = ["celery", "-A", "memory_console", "inspect", "ping", "--timeout", "5"]
    command += ["--destination", f"celery@{socket.gethostname()}"]
    return subprocess.run(command, capture_output=True, timeout=30).returncode == 0


if __name__ == "__main__":
    checks = {"web": web, "worker": worker}
    if len(sys.argv) != 2 or sys.argv[1] not in checks:
        sys.exit(f"usage: {sys.argv[0]} web|worker")
    sys.exit(0 if checks[sys.argv[1]]() else 1)
