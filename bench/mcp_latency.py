"""MCP benchmark: what the MCP endpoint adds to a call, against the REST call that does the same.

For each backend it builds a fresh installation (a temporary data directory for SQLite, the
embedded default, or a fresh PostgreSQL database `memory_console_bench_mcp`), runs `migrate`,
`create_agent`, and `memory_config` to let the agent's entries start approved, then loads
through the REST API: one thread of --messages messages (batches of 100) and --entries memory
entries. gunicorn with 2 workers x 4 threads (as `make run`) serves it, and one client sends,
one after another after a warm-up, --queries calls each way, each way on a keep-alive
connection of its own:

  get_context    REST  POST /api/v1/threads/{id}/context {query, max_tokens}
                 MCP   tools/call get_context {thread_id, query, max_tokens}
  recall_memory  REST  POST /api/v1/episodic/recall {query, top_k}
                 MCP   tools/call recall_memory {query, top_k}

The REST endpoint answers differently from the tool: the get_context tool returns the system
prompt, the messages and the ids a model needs, not the REST answer's blocks and items, and
the recall endpoint serializes whole entries with their signals. So each tool is also called
through POST /api/v1/tools/call, which runs exactly the MCP call's server code behind a plain
REST view: MCP minus /tools/call is what the protocol itself adds. The MCP calls are sent
three ways: as the bare JSON-RPC POST of a client of the 2025 protocol versions; as the POST
the official SDK's client sends (protocol 2026-07-28: its headers and _meta, a different path
in the SDK's server); both with the same HTTP client as REST, so their difference from REST is
the server's; and through the SDK's client itself (what an agent framework would see). The SDK
client minus the POST it sends is the client's own cost per call. All five are sent in turn for
each query (same query, same warm state; drift in the machine's load hits them alike), after a
warm-up. Each line reports p50/p95 and its p50 minus the REST endpoint's (target: the protocol
adds <= 5 ms). The queries cycle through words of the loaded text. The client, the server and
the database share the machine's CPUs.

Run it:
    .venv/bin/python bench/mcp_latency.py [--backend sqlite|postgres|both] [--messages 2000]
        [--entries 200] [--queries 200] [--port 8765]
    .venv/bin/python bench/mcp_latency.py --backend sqlite --messages 50 --entries 10 --queries 5
                                                                # checks that it works
"""

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path, where this file would stand in
# for the SDK's package of the same name: take the folder off while importing the SDK.
BENCH = Path(__file__).resolve().parent
sys.path = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCH]
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.inbound import (  # noqa: E402
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
)
from mcp_types import (  # noqa: E402
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: E402

sys.path.insert(0, str(BENCH))  # bench/ is not a package
from common import (  # noqa: E402
    Api,
    backend_environment,
    create_agent,
    expect_status,
    gunicorn,
    lap,
    log,
    manage,
    percentile,
    record,
    verdict,
)

PG_DATABASE = "memory_console_bench_mcp"
PROJECT, AGENT = "bench", "bench"
TARGET_MS = 5.0
WORDS = (
    "invoice shipment refund warehouse courier parcel delivery order address customer "
    "payment receipt discount voucher return damaged late express tracking label"
).split()
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) + "."


def load(api: Api, messages: int, entries: int) -> str:
    """Load one thread of messages and the entries through the REST API; return the thread id."""
    rng = random.Random(7)
    session = api.session()
    thread = expect_status(
        session.post(f"{api.base_url}/api/v1/threads", json={"resource_id": "ann"}), 201
    ).json()
    for start in range(0, messages, 100):
        batch = [
            {"role": ("user", "assistant")[n % 2], "content": sentence(rng)}
            for n in range(start, min(start + 100, messages))
        ]
        url = f"{api.base_url}/api/v1/threads/{thread['id']}/messages"
        expect_status(session.post(url, json={"messages": batch}), 201)
    for n in range(entries):
        body = {"content": f"Case {n}: {sentence(rng)}", "resource_id": "ann"}
        expect_status(session.post(f"{api.base_url}/api/v1/episodic", json=body), 201)
    return thread["id"]


WARM_UP = 3
# What the SDK's client sends with each request at the protocol it negotiates with this server.
SDK_VERSION = MODERN_PROTOCOL_VERSIONS[-1]
SDK_META = {
    PROTOCOL_VERSION_META_KEY: SDK_VERSION,
    CLIENT_INFO_META_KEY: {"name": "mcp", "version": "0.1.0"},
    CLIENT_CAPABILITIES_META_KEY: {},
}


def sdk_headers(tool: str) -> dict:
    return {
        MCP_PROTOCOL_VERSION_HEADER: SDK_VERSION,
        MCP_METHOD_HEADER: "tools/call",
        MCP_NAME_HEADER: tool,
    }


def rest_sender(api: Api, path: str):
    session = api.session()

    def send(body):
        expect_status(session.post(f"{api.base_url}{path}", json=body), 200)

    return send


def tools_call_sender(api: Api, tool: str):
    """The same tool through POST /api/v1/tools/call: the MCP call's server code, over REST."""
    send = rest_sender(api, "/api/v1/tools/call")
    return lambda arguments: send({"name": tool, "arguments": arguments})


def mcp_sender(api: Api, tool: str, *, as_sdk: bool):
    """Send tools/call as one JSON-RPC POST: bare (a 2025 client) or as the SDK's client does."""
    session = api.session()
    session.headers.update(MCP_HEADERS)
    if as_sdk:
        session.headers.update(sdk_headers(tool))
    ids = iter(range(1, 10**9))

    def send(arguments):
        params = {"name": tool, "arguments": arguments, **({"_meta": SDK_META} if as_sdk else {})}
        message = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": params}
        answer = expect_status(session.post(f"{api.base_url}/mcp", json=message), 200).json()
        if "error" in answer or answer["result"].get("isError"):
            raise RuntimeError(f"MCP {tool} failed: {answer}")

    return send


def time_all(api: Api, tool: str, senders: dict, rest_bodies: list, tool_bodies: list) -> dict:
    """Time every sender on each query in turn, the SDK's client too; latencies in ms by name."""

    async def main():
        headers = {"Authorization": f"Bearer {api.key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(f"{api.base_url}/mcp", http_client=http)
            async with Client(transport) as client:

                async def sdk(arguments):
                    result = await client.call_tool(tool, arguments)
                    if result.is_error:
                        raise RuntimeError(f"SDK {tool} failed: {result.content}")

                ids = iter(range(10**6, 10**9))

                async def sdk_http(arguments):
                    # The POST the SDK sends, on the SDK's own HTTP client, without the SDK.
                    params = {"name": tool, "arguments": arguments, "_meta": SDK_META}
                    message = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call"}
                    answer = await http.post(
                        f"{api.base_url}/mcp",
                        json={**message, "params": params},
                        headers={**MCP_HEADERS, **sdk_headers(tool)},
                    )
                    if answer.status_code != 200 or answer.json()["result"].get("isError"):
                        raise RuntimeError(f"MCP {tool} failed: {answer.text}")

                calls = {"sdk_http": sdk_http, "sdk": sdk}
                latencies = {name: [] for name in [*senders, *calls]}
                pairs = list(zip(rest_bodies, tool_bodies, strict=True))
                for n, (rest_body, tool_body) in enumerate(pairs[:WARM_UP] + pairs):
                    for name in latencies:
                        body = rest_body if name == "rest" else tool_body
                        start = time.perf_counter()
                        if name in calls:
                            await calls[name](body)
                        else:
                            senders[name](body)
                        if n >= WARM_UP:
                            latencies[name].append(lap(start))
                return latencies

    return asyncio.run(main())


def line(name: str, latencies: list[float], rest_p50: float | None = None) -> str:
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    text = f"  {name:<56} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms"
    if rest_p50 is not None:
        added = p50 - rest_p50
        text += f"  adds {added:+5.1f} ms ({verdict(added <= TARGET_MS)})"
    return text


def run_backend(backend: str, args) -> None:
    with backend_environment(backend, PG_DATABASE, prefix="mc-bench-mcp-") as env:
        log(f"{backend}: fresh database, migrate, create_agent, memory_config")
        manage(env, "migrate", "--noinput")
        key = create_agent(env, PROJECT, AGENT).strip()
        manage(
            env,
            "memory_config",
            "--project",
            PROJECT,
            "--agent",
            AGENT,
            "--set",
            "episodic_approval_required=false",
        )
        with gunicorn(env, args.port) as base_url:
            api = Api(base_url, key)
            log(f"{backend}: loading {args.messages} messages and {args.entries} entries")
            thread_id = load(api, args.messages, args.entries)
            rng = random.Random(11)
            queries = [" ".join(rng.sample(WORDS, 2)) for _ in range(args.queries)]
            context = [{"query": q, "max_tokens": 8000} for q in queries]
            recall = [{"query": q, "top_k": 5} for q in queries]
            cases = [
                ("get_context", f"/api/v1/threads/{thread_id}/context", context, thread_id),
                ("recall_memory", "/api/v1/episodic/recall", recall, None),
            ]
            print(f"{backend}: {args.queries} calls each, one keep-alive client per way")
            for tool, path, bodies, thread in cases:
                log(f"{backend}: timing {tool}")
                tool_bodies = [{**b, "thread_id": thread} if thread else b for b in bodies]
                senders = {
                    "rest": rest_sender(api, path),
                    "tools_call": tools_call_sender(api, tool),
                    "raw": mcp_sender(api, tool, as_sdk=False),
                    "raw_sdk": mcp_sender(api, tool, as_sdk=True),
                }
                times = time_all(api, tool, senders, bodies, tool_bodies)
                rest_p50 = percentile(times["rest"], 50)
                print(line(f"{tool}: REST {path.split('/')[-1]}", times["rest"]))
                print(line(f"{tool}: REST tools/call", times["tools_call"], rest_p50))
                print(line(f"{tool}: MCP JSON-RPC POST (2025 client)", times["raw"], rest_p50))
                print(
                    line(
                        f"{tool}: MCP JSON-RPC POST (as the SDK sends)", times["raw_sdk"], rest_p50
                    )
                )
                print(line(f"{tool}: the same POST on the SDK's HTTP client", times["sdk_http"]))
                print(line(f"{tool}: MCP via the SDK client", times["sdk"], rest_p50))
                p50 = {name: percentile(latencies, 50) for name, latencies in times.items()}
                protocol = p50["raw_sdk"] - p50["tools_call"]
                own = p50["sdk"] - p50["raw_sdk"]
                print(f"  {tool}: the protocol over /tools/call (server side)  {protocol:+5.1f} ms")
                print(
                    f"  {tool}: the SDK client's own cost (client side)   {own:+5.1f} ms, of which "
                    f"its HTTP client {p50['sdk_http'] - p50['raw_sdk']:+5.1f} ms"
                )
                record("mcp_latency", backend, f"{tool}, REST", "p50", rest_p50, "ms")
                ways = (
                    ("JSON-RPC POST", times["raw"]),
                    ("JSON-RPC POST as the SDK sends", times["raw_sdk"]),
                    ("SDK client", times["sdk"]),
                )
                for how, latencies in ways:
                    added = percentile(latencies, 50) - rest_p50
                    case = f"{tool}, MCP {how}"
                    record(
                        "mcp_latency", backend, case, "p50 added", added, "ms", ("<=", TARGET_MS)
                    )
                record("mcp_latency", backend, f"{tool}, SDK client's own", "p50", own, "ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    for backend in backends:
        run_backend(backend, args)


if __name__ == "__main__":
    main()
