"""Judge a batch of messages without a model: what to keep, with its call, merged and new.

1. Keep what the fallback keeps of each message; a failed tool result is told the call it
   answers (by tool_call_id, else the call just before it: threads.tool_pairing), read from
   the batch or, when the call came earlier, from the thread.
   A failure that the same call (the same tool with the same arguments) then got past is
   left out: a timeout that its retry recovered says nothing lasting about the tool, and as an
   entry it would tell the agent that the call fails.
2. Merge the candidates that repeat each other (dedupe).
3. Leave out those that repeat an entry of the scope, counted as repeats.
"""

from apps.episodic.consolidation import fallback
from apps.episodic.consolidation.dedupe import KnownEntries, repeats_merged
from apps.threads.outcome import message_outcome
from apps.threads.tool_pairing import answered_call_id, answers_a_call, answers_adjacent, call_id

# How far back a failed result's call is looked for when it is not in the batch.
CALLS_LOOKED_BACK = 50
# How far past the batch a retry of its failed calls is looked for: retries follow at once.
RETRIES_LOOKED_AHEAD = 20


def batch_keep(*, thread, batch, config, known: KnownEntries, candidate) -> tuple[list, int, int]:
    """Return the batch's new candidates (made by candidate(**fields)), how many were merged
    into another, and how many repeated an entry of the scope."""
    limit = config["episodic_max_entry_length"]
    calls = _calls_answered(thread, batch)
    recovered = _recovered(thread, batch, calls)
    kept = []
    for message in batch:
        if message.seq in recovered:
            continue
        result = fallback.message_keep(message, call=calls.get(message.seq))
        if result is None:
            continue
        kept.append(
            candidate(
                content=fallback.cap_at_sentence(result.content, limit),
                first_seq=message.seq,
                last_seq=message.seq,
                message=message,
                evidence=result.evidence,
            )
        )
    merged = repeats_merged(kept)
    new = [c for c in merged if not known.known(c.content)]
    for c in new:
        known.add(c.content)
    return new, len(kept) - len(merged), len(merged) - len(new)


def _recovered(thread, batch, calls: dict) -> set[int]:
    """Return the seqs of the batch's failed results whose call was made again, with the same
    tool and arguments, and then succeeded (in the batch or just after it)."""
    steps = _steps(batch, calls)
    failed = {seq: signature for seq, (signature, error) in steps.items() if error}
    if not failed:
        return set()
    after = list(
        thread.messages.filter(seq__gt=batch[-1].seq).order_by("seq")[:RETRIES_LOOKED_AHEAD]
    )
    if after:
        steps |= _steps(after, _calls_answered(thread, after))
    succeeded: dict[str, int] = {}  # signature -> seq of its last success
    for seq, (signature, error) in sorted(steps.items()):
        if not error:
            succeeded[signature] = seq
    return {seq for seq, signature in failed.items() if succeeded.get(signature, 0) > seq}


def _steps(messages, calls: dict) -> dict[int, tuple[str, bool]]:
    """{seq of a result whose call is known: (the call's signature, whether the result failed)}"""
    return {
        message.seq: (fallback.call_signature(calls[message.seq]), message_outcome(message).error)
        for message in messages
        if message.seq in calls
    }


def _calls_answered(thread, batch) -> dict:
    """Return {seq of a result in batch: the tool call it answers} for the results that failed
    or may fail; a result whose call is unknown is left out."""
    results = [m for m in batch if answers_a_call(m)]
    if not results:
        return {}
    earlier = list(
        thread.messages.filter(kind="tool_call", seq__lt=batch[0].seq).order_by("-seq")[
            :CALLS_LOOKED_BACK
        ]
    )
    seen = list(reversed(earlier)) + [m for m in batch if m.kind == "tool_call"]
    by_id = {call_id(call): call for call in seen if call_id(call)}
    answered = {}
    previous = earlier[0] if earlier and earlier[0].seq == batch[0].seq - 1 else None
    for message in batch:
        if message.kind == "tool_call":
            previous = message
            continue
        if not answers_a_call(message):
            previous = None if message.kind == "message" else previous
            continue
        wanted = answered_call_id(message)
        call = by_id.get(wanted) if wanted else None
        if call is None and not wanted and previous is not None:
            call = previous if answers_adjacent(message, previous) else None
        if call is not None:
            answered[message.seq] = call
        previous = None
    return answered
