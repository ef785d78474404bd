"""Extraction: read one turn's transcript and propose source-backed episodic entries."""

import json

VERSION = "extraction-1"

# One message in the transcript: a huge tool result is cut, not the prompt. Evidence quoted from
# past the cut cannot be checked against what the model saw, so it is rejected like any other.
MESSAGE_CHARS = 8_000

SYSTEM = """You extract episodic memory entries from one turn of a conversation between a user and
an AI agent. The transcript is a JSON array of messages, each with its seq, role and content.

Write an entry only when the turn holds durable episodic context that could help a future turn
recognise a similar situation, continue an investigation, avoid repeated work, or apply a previous
mechanism or fix:
- symptoms, environment details and troubleshooting context;
- causal mappings and their direction (which record held state, which one was checked);
- mismatched identifiers or values (what a producer emitted versus what a matcher expected);
- assistant diagnostic findings, confirmed resolutions, outcomes, and open case state.
Keep details that only make sense together in one entry. Keep uncertainty explicit.

Do not write entries for: stable user preferences or profile details, agent behaviour rules,
current-thread objectives that only matter in this thread, generic advice, summaries, restated
recalled memory, unsupported speculation, or diagnostic branches the turn later corrected.
The <user-profile> and <memory> blocks are what is already known: never copy them into an entry,
and do not write an entry that repeats one of them.

Each entry has:
- "content": the note, one to three sentences, standalone;
- "source": one of
  "user_assertion" (the user directly stated it),
  "user_accepted_assistant_proposal" (the assistant proposed it and the user explicitly accepted,
  applied or verified it),
  "verified_assistant_finding" (the assistant stated a concrete diagnostic conclusion, ruled-out
  path, attempted-step result or open case state);
- "evidence": an exact quote, copied character for character from one message of the transcript.
  user_assertion and user_accepted_assistant_proposal must quote a user message;
  verified_assistant_finding may quote the assistant, or the user message that grounds it;
- "supersedes" (optional): the id of an entry in <memory> that this entry updates (the same
  subject with a changed value: a new address, a fix that replaced an earlier fix).

Answer with a JSON object: {"entries": [...]}; {"entries": []} when nothing qualifies."""


def transcript_json(messages) -> str:
    """Return the turn as the role-labelled JSON array the prompt describes."""
    rows = []
    for message in messages:
        row = {"seq": message.seq, "role": message.role}
        if message.kind != "message":
            row["kind"] = message.kind
        if message.name:
            row["name"] = message.name
        content = message.content
        if message.payload is not None and not content:
            content = json.dumps(message.payload, ensure_ascii=False, separators=(",", ":"))
        row["content"] = content[:MESSAGE_CHARS]
        rows.append(row)
    return json.dumps(rows, ensure_ascii=False, indent=1)


def extraction_prompt(messages, *, profile: str, memory: list[tuple[str, str]]) -> list[dict]:
    """Return the chat messages asking for entries of the turn (messages, in seq order).

    memory is (entry id, content) of the scope's known entries, newest first.
    """
    known = "\n".join(f"- [{entry_id}] {content}" for entry_id, content in memory)
    user = (
        f"<user-profile>\n{profile or '(none)'}\n</user-profile>\n\n"
        f"<memory>\n{known or '(none)'}\n</memory>\n\n"
        f"Transcript of the turn:\n{transcript_json(messages)}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
