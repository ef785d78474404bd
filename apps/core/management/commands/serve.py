import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection

# How long the web server and the worker get to finish what they are doing once asked to stop.
STOP_SECONDS = 30


class Command(BaseCommand):
    help = (
        "Serve the web application (gunicorn) and the job worker side by side. Ctrl-C or "
        "SIGTERM stops both and exits 0; if either one exits, the other is stopped too."
    )

    def add_arguments(self, parser):
        parser.add_argument("--bind", default="127.0.0.1:8000", help="HOST:PORT to listen on.")
        parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes.")
        parser.add_argument("--threads", type=int, default=4, help="Threads per worker.")

    def handle(self, *args, bind, workers, threads, **options):
        # A database that cannot be used fails here, as one line from manage.py, rather than
        # in every request and every poll of the worker.
        connection.ensure_connection()
        connection.close()
        commands = {
            "worker": [sys.executable, "-m", "django", "run_worker"],
            "web": [
                *(sys.executable, "-m", "gunicorn", "memory_console.wsgi"),
                *("--bind", bind, "--workers", str(workers), "--threads", str(threads)),
                # Nothing here uses gunicorn's control socket, and its one default path per user
                # would be fought over by two servers on one machine.
                *("--access-logfile", "-", "--no-control-socket"),
            ],
        }
        # Unbuffered, the two logs interleave in the order things happened.
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.signalled = 0
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)
        # Each child in its own process group: a terminal's Ctrl-C reaches this command only, so
        # the children stop once, in order, when it asks them to.
        self.children = {
            name: subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, process_group=0)
            for name, command in commands.items()
        }
        failed = self._wait_for_one()
        self._stop_all()
        if failed:
            name, code = failed
            self.stderr.write(f"serve: the {name} exited with status {code}; stopped the rest.")
            sys.exit(1)

    def _on_signal(self, signum, frame):
        self.signalled += 1
        if self.signalled > 1:  # a second Ctrl-C means now, not after the running requests
            for child in self.children.values():
                if child.poll() is None:
                    child.kill()

    def _wait_for_one(self) -> tuple[str, int] | None:
        """Wait until a signal or a child's exit; return (name, status) of a child that quit."""
        while not self.signalled:
            for name, child in self.children.items():
                if child.poll() is not None:
                    return name, child.returncode
            time.sleep(0.2)
        return None

    def _stop_all(self) -> None:
        for child in self.children.values():
            if child.poll() is None:
                child.terminate()
        deadline = time.monotonic() + STOP_SECONDS
        for child in self.children.values():
            try:
                child.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
