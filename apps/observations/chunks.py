"""Read a thread's messages in bounded stretches, for the Observer and compaction."""

from apps.threads.selectors import message_page
from apps.threads.tool_pairing import answers_a_call

_PAGE = 200


def message_chunks(*, thread, after_seq: int, up_to_seq: int, max_tokens: int):
    """Yield the messages after_seq+1…up_to_seq in order, in lists of about max_tokens at most.

    A message larger than max_tokens is a list of its own: it is still observed, alone. A list
    does not end on a tool call whose result comes next: the call opens the next list.
    """
    chunk, tokens, cursor = [], 0, after_seq
    while cursor < up_to_seq:
        page, _ = message_page(
            thread=thread, after_seq=cursor, before_seq=up_to_seq + 1, limit=_PAGE
        )
        if not page:
            break
        for message in page:
            if chunk and tokens + message.token_count > max_tokens:
                # A call stays with the result that answers it, so its step reads whole.
                held = len(chunk) > 1 and chunk[-1].kind == "tool_call" and answers_a_call(message)
                carried = [chunk.pop()] if held else []
                yield chunk
                chunk, tokens = carried, sum(row.token_count for row in carried)
            chunk.append(message)
            tokens += message.token_count
        cursor = page[-1].seq
    if chunk:
        yield chunk
