"""A test HTTP or TCP server on loopback, served from a thread for the length of a test."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from socketserver import BaseServer


@contextmanager
def serving(server: BaseServer) -> Iterator[str]:
    """Serve server (bound to 127.0.0.1) from a daemon thread; yield its base URL."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
