"""MCP benchmark: what the MCP endpoint adds to a call, against the REST call that does the same.

For each backend it builds a fresh installation (a temporary data directory for SQLite, the
embedded default, or a fresh PostgreSQL database `memory_console_bench_mcp`), runs `migrate`,
`create_agent`, and `memory_config` to let the agent's entries start approved, then loads
through the REST API: one thread of --messages messages (batches of 100) and --entries memory
entries. gunicorn with 2 workers x 4 threads (as `make run`) serves it, and one client on one
keep-alive connection sends, one after another after a warm-up, --queries calls of each:

  get_context    REST  POST /api/v1/threads/{id}/context {query, max_tokens}
                 MCP   tools/call get_context {thread_id, query, max_tokens}
  recall_memory  REST  POST /api/v1/episodic/recall {query, top_k}
                 MCP   tools/call recall_memory {query, top_k}

Both do the same work in the server, but answer differently: the get_context tool returns the
system prompt, the messages and the ids a model needs, not the REST answer's blocks and items,
so it renders less JSON. The MCP calls are sent twice: as the JSON-RPC POSTs a Streamable HTTP
client sends (the same HTTP client as REST, so the difference is the server's), and through the
official SDK's client (what an agent framework would see, its own overhead included). Each
line reports p50/p95 and the MCP p50 minus the REST p50 (target: the protocol adds <= 5 ms).
The queries cycle through words of the loaded text. The client, the server and the database
share the machine's CPUs.

Run it:
    .venv/bin/python bench/mcp.py [--backend sqlite|postgres|both] [--messages 2000]
        [--entries 200] [--queries 200] [--port 8765]
    .venv/bin/python bench/mcp.py --backend sqlite --messages 50 --entries 10 --queries 5
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


def time_calls(send, bodies: list) -> list[float]:
    """Send each body after three warm-up calls; return the latencies in ms."""
    for body in bodies[:3]:
        send(body)
    latencies = []
    for body in bodies:
        start = time.perf_counter()
        send(body)
        latencies.append(lap(start))
    return latencies


def rest_sender(api: Api, path: str):
    session = api.session()

    def send(body):
        expect_status(session.post(f"{api.base_url}{path}", json=body), 200)

    return send


def mcp_sender(api: Api, tool: str):
    """Send tools/call as one JSON-RPC POST, as a Streamable HTTP client does (stateless)."""
    session = api.session()
    session.headers.update(MCP_HEADERS)
    ids = iter(range(1, 10**9))

    def send(arguments):
        message = {
            "jsonrpc": "2.0",
            "id": next(ids),
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        answer = expect_status(session.post(f"{api.base_url}/mcp", json=message), 200).json()
        if "error" in answer or answer["result"].get("isError"):
            raise RuntimeError(f"MCP {tool} failed: {answer}")

    return send


def sdk_latencies(api: Api, tool: str, bodies: list) -> list[float]:
    """Time the calls through the official SDK's client, one session, after a warm-up."""

    async def main():
        headers = {"Authorization": f"Bearer {api.key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(f"{api.base_url}/mcp", http_client=http)
            async with Client(transport) as client:
                for body in bodies[:3]:
                    await client.call_tool(tool, body)
                latencies = []
                for body in bodies:
                    start = time.perf_counter()
                    result = await client.call_tool(tool, body)
                    latencies.append(lap(start))
                    if result.is_error:
                        raise RuntimeError(f"SDK {tool} failed: {result.content}")
                return latencies

    return asyncio.run(main())


def line(name: str, latencies: list[float], rest_p50: float | None = None) -> str:
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    text = f"  {name:<44} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms"
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
            print(f"{backend}: {args.queries} calls each, one keep-alive client")
            for tool, path, bodies, thread in cases:
                log(f"{backend}: timing {tool}")
                tool_bodies = [{**b, "thread_id": thread} if thread else b for b in bodies]
                rest = time_calls(rest_sender(api, path), bodies)
                raw = time_calls(mcp_sender(api, tool), tool_bodies)
                sdk = sdk_latencies(api, tool, tool_bodies)
                rest_p50 = percentile(rest, 50)
                print(line(f"{tool}: REST {path.split('/')[-1]}", rest))
                print(line(f"{tool}: MCP tools/call (JSON-RPC POST)", raw, rest_p50))
                print(line(f"{tool}: MCP via the SDK client", sdk, rest_p50))
                record("mcp", backend, f"{tool}, REST", "p50", rest_p50, "ms")
                for how, latencies in (("JSON-RPC POST", raw), ("SDK client", sdk)):
                    added = percentile(latencies, 50) - rest_p50
                    case = f"{tool}, MCP {how}"
                    record("mcp", backend, case, "p50 added", added, "ms", ("<=", TARGET_MS))


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
