"""Requests to addresses that users give (web pages for knowledge bases, action webhooks).

An address a user types must not reach what only the server can reach: the loopback interface,
the private network, link-local addresses such as the cloud metadata service (169.254.169.254).
So before every request, the first and each redirect alike:
  1. only http and https, without credentials in the address;
  2. the host name is resolved and EVERY address it resolves to must be public, unless it lies
     in a network that settings.OUTBOUND_ALLOWED_NETWORKS allows;
  3. the connection goes to the address that was checked (the name is not resolved again, so a
     second answer from DNS cannot swap in a private address); TLS still verifies the name.
Responses are read up to a size cap and within one deadline for the whole fetch (connect,
headers and body, redirects included), whatever the server does: see _Deadline.
urllib3 does the HTTP (connection pinned to the checked address, certificate checked against
the host name); redirects are followed here, one checked hop at a time.
"""

import contextlib
import ipaddress
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import urllib3
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from urllib3.connection import HTTPConnection, HTTPSConnection

SCHEMES = ("http", "https")
MAX_REDIRECTS = 5
_REDIRECTS = {301, 302, 303, 307, 308}
_READ_CHUNK = 64 * 1024
USER_AGENT = "MemoryConsole/1 (+knowledge base fetcher)"


class OutboundRefused(Exception):
    """The address may not be fetched (scheme, credentials, or where it resolves to)."""


class OutboundError(Exception):
    """The fetch failed; retryable says whether trying again later may succeed."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status  # the HTTP status that answered, when one did


class OutboundTooLarge(OutboundError):
    """The response is over the size cap."""


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str
    port: int
    path: str  # path and query, as sent in the request line
    address: str  # the checked address the connection goes to


@dataclass(frozen=True)
class Fetched:
    url: str  # the address that answered, after redirects
    status: int
    content_type: str  # media type, lower case, without parameters
    charset: str | None
    body: bytes


class _Deadline:
    """One deadline for a whole exchange: when it passes, every socket it opened is shut down.

    A socket timeout bounds each read, not their sum: a server that sends one byte of its
    headers or body every few seconds keeps every read under the timeout, and held a fetch with
    a 5 s timeout for minutes (and the worker with it). Shutting the socket down from a timer
    ends whatever read is waiting, in the status line, the headers, the TLS handshake or the
    body alike; `expired` then tells the reader that the end it saw was the deadline's.
    """

    def __init__(self, seconds: float):
        self.at = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)


class _WatchedHTTPConnection(HTTPConnection):
    """A connection whose socket, once connected, is cut when its deadline passes."""

    def __init__(self, *args, deadline: _Deadline, **kwargs):
        self._deadline = deadline
        super().__init__(*args, **kwargs)

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        self._deadline.watch(sock)  # the plain socket: cutting it ends a TLS handshake too
        return sock


class _WatchedHTTPSConnection(HTTPSConnection):
    def __init__(self, *args, deadline: _Deadline, **kwargs):
        self._deadline = deadline
        super().__init__(*args, **kwargs)

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        self._deadline.watch(sock)
        return sock


def allowed_networks() -> list:
    """Return the networks settings.OUTBOUND_ALLOWED_NETWORKS opens despite being non-public."""
    networks = []
    for value in settings.OUTBOUND_ALLOWED_NETWORKS:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"OUTBOUND_ALLOWED_NETWORKS: {value!r} is not an address or a network (CIDR)."
            ) from None
    return networks


def address_kind(address) -> str | None:
    """Return why an address is not public ("loopback", "private", …), None when it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    for kind in ("loopback", "link_local", "unspecified", "multicast", "private", "reserved"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    return None if address.is_global else "non-public"


def _a(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def address_allowed(address) -> bool:
    if address_kind(address) is None:
        return True
    return any(address in network for network in allowed_networks())


def url_check(url: str) -> Target:
    """Return where url may be fetched from; raise OutboundRefused saying why it may not."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise OutboundRefused(f"{url!r} is not a valid address ({exc}).") from None
    if parts.scheme.lower() not in SCHEMES:
        shown = parts.scheme or "none"
        raise OutboundRefused(f"only http and https addresses are fetched (scheme: {shown}).")
    if not parts.hostname:
        raise OutboundRefused(f"{url!r} names no host.")
    if parts.username or parts.password:
        raise OutboundRefused("the address must not carry a user name or password.")
    scheme = parts.scheme.lower()
    port = port or (443 if scheme == "https" else 80)
    try:
        found = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise OutboundRefused(
            f"the host {parts.hostname!r} could not be resolved ({exc})."
        ) from None
    addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in found))
    for address in addresses:
        if not address_allowed(address):
            raise OutboundRefused(
                f"{parts.hostname} resolves to {address}, {_a(address_kind(address))} address; "
                "fetching loopback, private and link-local addresses is off unless "
                "OUTBOUND_ALLOWED_NETWORKS names them."
            )
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    return Target(
        url=url.strip(),
        scheme=scheme,
        host=parts.hostname,
        port=port,
        path=path,
        address=str(addresses[0]),
    )


def fetch(url: str, *, max_bytes: int, timeout: float, accept: str = "*/*") -> Fetched:
    """GET url, checking every hop; raise OutboundRefused, OutboundTooLarge or OutboundError."""
    deadline = _Deadline(timeout)
    try:
        for _hop in range(MAX_REDIRECTS + 1):
            target = url_check(url)
            response = _request(target, deadline, timeout, {"Accept": accept})
            try:
                if response.status in _REDIRECTS and response.headers.get("Location"):
                    url = urljoin(target.url, response.headers["Location"])
                    continue
                if response.status >= 400:
                    raise OutboundError(
                        f"{target.url} answered HTTP {response.status}.",
                        retryable=response.status >= 500 or response.status == 429,
                    )
                body = _read(response, target, max_bytes, deadline, timeout)
                media, charset = _content_type(response.headers.get("Content-Type", ""))
                return Fetched(target.url, response.status, media, charset, body)
            finally:
                response.release_conn()
        raise OutboundError(f"more than {MAX_REDIRECTS} redirects from {url}.")
    finally:
        deadline.cancel()


@dataclass(frozen=True)
class Posted:
    url: str
    status: int
    body: bytes  # the start of the answer, for the record


def post(url: str, *, body: bytes, headers: dict, timeout: float) -> Posted:
    """POST body to url after the same checks as fetch(); a redirect is not followed (a
    webhook's address is configured, so a move is the configuration's to fix).

    Raises OutboundRefused, or OutboundError when the answer is not 2xx (retryable for 5xx,
    429 and a failed connection).
    """
    deadline = _Deadline(timeout)
    try:
        target = url_check(url)
        response = _request(target, deadline, timeout, headers, method="POST", body=body)
        try:
            answer = _read(response, target, 4096, deadline, timeout)
        except OutboundTooLarge:
            answer = b""  # a long answer is still an answer: its status decides
        finally:
            response.release_conn()
    finally:
        deadline.cancel()
    if not 200 <= response.status < 300:
        raise OutboundError(
            f"{target.url} answered HTTP {response.status}.",
            retryable=response.status >= 500 or response.status == 429,
            status=response.status,
        )
    return Posted(target.url, response.status, answer)


def _too_slow(target: Target, timeout: float) -> OutboundError:
    return OutboundError(
        f"{target.url} did not answer in full within {timeout:g} s.", retryable=True
    )


def _request(
    target: Target, deadline: _Deadline, timeout: float, headers: dict, *, method="GET", body=None
):
    remaining = deadline.remaining()
    if remaining <= 0:
        raise _too_slow(target, timeout)
    options = {
        "timeout": urllib3.Timeout(connect=remaining, read=remaining),
        "retries": False,
        "deadline": deadline,
    }
    if target.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            target.address,
            target.port,
            server_hostname=target.host,
            assert_hostname=target.host,
            **options,
        )
        pool.ConnectionCls = _WatchedHTTPSConnection
    else:
        pool = urllib3.HTTPConnectionPool(target.address, target.port, **options)
        pool.ConnectionCls = _WatchedHTTPConnection
    default_port = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    if target.port != default_port:
        host += f":{target.port}"
    try:
        return pool.urlopen(
            method,
            target.path,
            body=body,
            headers={"Host": host, "User-Agent": USER_AGENT, **headers},
            redirect=False,
            preload_content=False,
            retries=False,
        )
    except urllib3.exceptions.HTTPError as exc:
        if deadline.expired:
            raise _too_slow(target, timeout) from None
        raise OutboundError(f"{target.url} could not be fetched: {exc}", retryable=True) from None


def _read(response, target: Target, max_bytes: int, deadline: _Deadline, timeout: float) -> bytes:
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise OutboundTooLarge(
            f"{target.url} is {int(declared)} bytes; the limit is {max_bytes} bytes."
        )
    body = bytearray()
    try:
        for piece in response.stream(_READ_CHUNK):
            body += piece
            if len(body) > max_bytes:
                raise OutboundTooLarge(
                    f"{target.url} is over the limit of {max_bytes} bytes; it was not stored."
                )
            if deadline.remaining() < 0:
                raise _too_slow(target, timeout)
    except urllib3.exceptions.HTTPError as exc:
        if deadline.expired:
            raise _too_slow(target, timeout) from None
        raise OutboundError(f"{target.url} broke off: {exc}", retryable=True) from None
    if deadline.expired:  # a body without a length ends where the deadline cut it: not whole
        raise _too_slow(target, timeout)
    return bytes(body)


def _content_type(header: str) -> tuple[str, str | None]:
    media, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"').lower()
    return media.strip().lower(), charset
