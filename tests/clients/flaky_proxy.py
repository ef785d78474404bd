"""A real HTTP proxy on loopback that fails the next requests it is told to, then forwards.

It stands between the client and a live server so a test can make the server's answers a 429
or a 5xx (with a Retry-After) without touching the server, and count what was sent.
"""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests


class FlakyProxy:
    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.failures: list[tuple[int, str | None]] = []  # (status, Retry-After) per request
        self.seen: list[tuple[str, str, float]] = []  # (method, path, monotonic time)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.seen.append((self.command, self.path, time.monotonic()))
                if proxy.failures:
                    status, retry_after = proxy.failures.pop(0)
                    payload = b'{"error": {"code": "flaky", "message": "injected", "details": {}}}'
                    headers = {"Content-Type": "application/json"}
                    if retry_after is not None:
                        headers["Retry-After"] = retry_after
                else:
                    forwarded = {
                        k: v for k, v in self.headers.items() if k.lower() not in ("host",)
                    }
                    answer = requests.request(
                        self.command,
                        proxy.upstream + self.path,
                        data=body,
                        headers=forwarded,
                        timeout=30,
                    )
                    status, payload = answer.status_code, answer.content
                    headers = {"Content-Type": answer.headers.get("Content-Type", "")}
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def fail_next(self, *failures: tuple[int, str | None]) -> None:
        self.failures.extend(failures)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
