"""Requests to addresses that users give (web pages for knowledge bases, action webhooks).

An address a user types must not reach what only the server can reach: the loopback interface,
the private network, link-local addresses such as the cloud metadata service (169.254.169.254).
So before every request, the first and each redirect alike:
  1. only http and https, without credentials in the address;
  2. the host name is resolved and EVERY address it resolves to must be public, unless it lies
     in a network that settings.OUTBOUND_ALLOWED_NETWORKS allows;
  3. the connection goes to the address that was checked (the name is not resolved again, so a
     second answer from DNS cannot swap in a private address); TLS still verifies the name.
Responses are read up to a size cap and within one deadline for the whole fetch.
urllib3 does the HTTP (connection pinned to the checked address, certificate checked against
the host name); redirects are followed here, one checked hop at a time.
"""

import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import urllib3
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

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
    deadline = time.monotonic() + timeout
    for _hop in range(MAX_REDIRECTS + 1):
        target = url_check(url)
        response = _request(target, deadline, {"Accept": accept})
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
    deadline = time.monotonic() + timeout
    target = url_check(url)
    response = _request(target, deadline, headers, method="POST", body=body)
    try:
        answer = _read(response, target, 4096, deadline, timeout)
    except OutboundTooLarge:
        answer = b""  # a long answer is still an answer: its status decides
    finally:
        response.release_conn()
    if not 200 <= response.status < 300:
        raise OutboundError(
            f"{target.url} answered HTTP {response.status}.",
            retryable=response.status >= 500 or response.status == 429,
            status=response.status,
        )
    return Posted(target.url, response.status, answer)


def _request(target: Target, deadline: float, headers: dict, *, method="GET", body=None):
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise OutboundError(f"{target.url} did not answer in time.", retryable=True)
    options = {"timeout": urllib3.Timeout(connect=remaining, read=remaining), "retries": False}
    if target.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            target.address,
            target.port,
            server_hostname=target.host,
            assert_hostname=target.host,
            **options,
        )
    else:
        pool = urllib3.HTTPConnectionPool(target.address, target.port, **options)
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
        raise OutboundError(f"{target.url} could not be fetched: {exc}", retryable=True) from None


def _read(response, target: Target, max_bytes: int, deadline: float, timeout: float) -> bytes:
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
            if time.monotonic() > deadline:
                raise OutboundError(
                    f"{target.url} took longer than {timeout:g} s to download.", retryable=True
                )
    except urllib3.exceptions.HTTPError as exc:
        raise OutboundError(f"{target.url} broke off: {exc}", retryable=True) from None
    return bytes(body)


def _content_type(header: str) -> tuple[str, str | None]:
    media, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"').lower()
    return media.strip().lower(), charset
