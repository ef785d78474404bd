"""An OpenAI Agents SDK agent whose history and memory live in Memory Console.

MemoryConsoleSession stores every item of the conversation (user and assistant messages, tool
calls and their results) as messages of one thread, and the agent's instructions carry the
thread's assembled context on every model call: profile, observations, <memory> entries,
knowledge and recalled past messages. Memory forms from the log as for any agent.

    pip install "./clients/python[agents]"
    MEMORY_CONSOLE_URL=http://127.0.0.1:8000 MEMORY_CONSOLE_KEY=mc_… \\
    OPENAI_API_KEY=… OPENAI_BASE_URL=… MODEL=gpt-4o-mini python examples/agents_session.py

Any OpenAI-compatible chat endpoint works: the agent uses the Chat Completions API.
"""

import asyncio
import os
from datetime import UTC, datetime

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from memory_console_client import MemoryConsole
from memory_console_client.agents import MemoryConsoleSession
from openai import AsyncOpenAI

SYSTEM = "You are a helpful assistant. Use what you remember about the user below."


@function_tool
def current_time(timezone: str = "UTC") -> str:
    """The current time, as ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds") + f" ({timezone} asked)"


def build_agent(session: MemoryConsoleSession, model: AsyncOpenAI, model_name: str) -> Agent:
    return Agent(
        name="assistant",
        instructions=session.instructions(SYSTEM),
        model=OpenAIChatCompletionsModel(model=model_name, openai_client=model),
        tools=[current_time],
    )


async def turn(agent: Agent, session: MemoryConsoleSession, text: str) -> str:
    """Answer one user message; the Runner reads and extends the session's history."""
    result = await Runner.run(agent, text, session=session)
    return str(result.final_output)


async def main() -> None:
    set_tracing_disabled(True)  # traces would go to OpenAI's platform, not to this endpoint
    memory = MemoryConsole(os.environ["MEMORY_CONSOLE_URL"], os.environ["MEMORY_CONSOLE_KEY"])
    user = os.environ.get("USER", "me")
    session = MemoryConsoleSession(memory, external_id=user, resource_id=user)
    agent = build_agent(session, AsyncOpenAI(), os.environ.get("MODEL", "gpt-4o-mini"))
    while True:
        try:
            text = input("you> ").strip()
        except EOFError:
            break
        if text:
            print("agent>", await turn(agent, session, text))


if __name__ == "__main__":
    asyncio.run(main())
