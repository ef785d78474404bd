"""An agent loop on Memory Console: ask for the context before each model call, log after it.

For each user turn the agent
1. appends the user's message to its thread,
2. asks Memory Console for the context (system_prompt + recent messages) and calls the model,
3. runs the tools the model calls, logging each call and result, and calls the model again,
4. appends the answer.
Memory forms from the log on its own: observations, `[[MEMORY: …]]` facts, search. The model
also gets Memory Console's own tools (recall_memory, search_memory, remember) from
GET /api/v1/tools; their calls are forwarded unchanged to POST /api/v1/tools/call.

Run it against a server (`make run` prints a key) and any OpenAI-compatible endpoint:

    MEMORY_CONSOLE_URL=http://127.0.0.1:8000 MEMORY_CONSOLE_KEY=mc_… \\
    OPENAI_API_KEY=… OPENAI_BASE_URL=… MODEL=gpt-4o-mini python examples/agent_loop.py

Needs `openai` and the Memory Console client: `pip install ./clients/python`.
"""

import json
import os
from datetime import UTC, datetime

from memory_console_client import MemoryConsole, MemoryConsoleError
from openai import OpenAI

SYSTEM = "You are a helpful assistant. Use what you remember about the user below."
MAX_TOOL_STEPS = 5
# Memory Console's tools this agent lets its model call; it logs and reads context itself.
MEMORY_TOOLS = (
    "recall_memory",
    "search_memory",
    "remember",
    "note_read",
    "note_write",
    "note_search",
)


def memory_tools(memory: MemoryConsole, names) -> list[dict]:
    """The named tools' function definitions, as `tools=` of a chat completion takes them."""
    return [t for t in memory.tools.list() if t["function"]["name"] in names]


def memory_tool_call(memory: MemoryConsole, name: str, arguments: str) -> str:
    """Run a model's tool call as it wrote it; a bad call's error goes back to the model."""
    try:
        answer = memory.tools.call(name, arguments)
    except MemoryConsoleError as error:
        return "Error: " + error.message
    return json.dumps(answer["result"])


# The agent's tools: name → (JSON schema of the arguments, function).
def current_time(timezone: str = "UTC") -> str:
    return datetime.now(UTC).isoformat(timespec="seconds") + f" ({timezone} asked)"


TOOLS = {
    "current_time": (
        {"type": "object", "properties": {"timezone": {"type": "string"}}},
        current_time,
    ),
}


def chat_message(message: dict) -> dict:
    """Turn a message of the context back into a chat completion message."""
    if message["kind"] == "tool_call":
        call = message["payload"]
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": message["name"], "arguments": call["arguments"]},
                }
            ],
        }
    if message["kind"] == "tool_result":
        return {
            "role": "tool",
            "tool_call_id": message["payload"]["tool_call_id"],
            "content": message["content"],
        }
    return {"role": message["role"], "content": message["content"]}


def turn(memory: MemoryConsole, model: OpenAI, model_name: str, thread, text: str) -> str:
    """Answer one user message, keeping the thread's log in Memory Console."""
    memory.messages.append(thread, {"role": "user", "content": text})
    tools = [
        {"type": "function", "function": {"name": name, "parameters": schema}}
        for name, (schema, _) in TOOLS.items()
    ] + memory_tools(memory, MEMORY_TOOLS)
    for _ in range(MAX_TOOL_STEPS):
        context = memory.context(thread, query=text)
        messages = [{"role": "system", "content": f"{SYSTEM}\n\n{context['system_prompt']}"}]
        messages += [chat_message(message) for message in context["messages"]]
        reply = model.chat.completions.create(model=model_name, messages=messages, tools=tools)
        answer = reply.choices[0].message
        if not answer.tool_calls:
            break
        log = []
        for call in answer.tool_calls:
            if call.function.name in TOOLS:
                _, function = TOOLS[call.function.name]
                output = str(function(**json.loads(call.function.arguments or "{}")))
            else:
                output = memory_tool_call(memory, call.function.name, call.function.arguments)
            log += [
                {
                    "role": "assistant",
                    "kind": "tool_call",
                    "name": call.function.name,
                    "payload": {"id": call.id, "arguments": call.function.arguments},
                },
                {
                    "role": "tool",
                    "kind": "tool_result",
                    "name": call.function.name,
                    "content": output,
                    "payload": {"tool_call_id": call.id},
                },
            ]
        memory.messages.append(thread, *log)  # the calls and their results, as the model saw
    memory.messages.append(thread, {"role": "assistant", "content": answer.content or ""})
    return answer.content or ""


def main() -> None:
    memory = MemoryConsole(os.environ["MEMORY_CONSOLE_URL"], os.environ["MEMORY_CONSOLE_KEY"])
    model = OpenAI()  # OPENAI_API_KEY, OPENAI_BASE_URL from the environment
    user = os.environ.get("USER", "me")
    run = memory.runs.open("terminal", user, resource_id=user, name="terminal session")
    model_name = os.environ.get("MODEL", "gpt-4o-mini")
    while True:
        try:
            text = input("you> ").strip()
        except EOFError:
            break
        if text:
            print("agent>", turn(memory, model, model_name, run["thread_id"], text))
    memory.runs.finish(run, status="succeeded")


if __name__ == "__main__":
    main()
