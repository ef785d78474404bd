"""manage.py serve (what `make run` starts): web server and job worker start together and
stop together, cleanly, on Ctrl-C or SIGTERM."""

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.core.servers import free_port, manage, server_env, start, stop, wait_until_serving


def processes_of(data_dir: Path) -> list[int]:
    """The live processes started with this data directory in their environment."""
    marker = f"DATA_DIR={data_dir}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except OSError:  # gone meanwhile, or not ours
            continue
    return found


def wait_for_text(log: Path, text: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in log.read_text():
        assert time.monotonic() < deadline, f"no {text!r} in:\n{log.read_text()}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """The data directory of a fresh SQLite deployment, migrated once for the module."""
    data_dir = tmp_path_factory.mktemp("deployment")
    migrated = manage("migrate", "--noinput", "-v0", env=server_env(data_dir))
    assert migrated.returncode == 0, migrated.stderr
    return data_dir


def serve(env: dict, port: int, log: Path) -> subprocess.Popen:
    bind = f"127.0.0.1:{port}"
    args = [sys.executable, "manage.py", "serve", "--bind", bind, "--workers", "1"]
    return start([*args, "--threads", "2"], env, log)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_it_stops_the_web_server_and_the_worker_and_exits_0(data_dir, tmp_path, signum):
    port, log = free_port(), tmp_path / "serve.log"
    process = serve(server_env(data_dir), port, log)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/healthz", process, log)
        wait_for_text(log, "polling for jobs")  # the job worker is up too
        assert len(processes_of(data_dir)) == 4  # serve, the job worker, gunicorn, its worker

        process.send_signal(signum)
        status = process.wait(timeout=20)
    finally:
        stop(process)

    output = log.read_text()
    assert status == 0, output
    assert "Segmentation fault" not in output and "Traceback" not in output, output
    assert "Shutting down: Master" in output  # gunicorn stopped itself, it was not killed
    assert processes_of(data_dir) == []
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)


def test_when_the_web_server_cannot_start_it_stops_the_worker_and_fails(data_dir, tmp_path):
    log = tmp_path / "serve.log"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        process = serve(server_env(data_dir), taken.getsockname()[1], log)
        try:
            status = process.wait(timeout=60)
        finally:
            stop(process)

    assert status == 1
    assert "serve: the web exited with status" in log.read_text()
    assert processes_of(data_dir) == []
