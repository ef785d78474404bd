"""Read a thread's messages in bounded stretches, for the Observer and compaction."""

from apps.threads.selectors import message_page

_PAGE = 200


def message_chunks(*, thread, after_seq: int, up_to_seq: int, max_tokens: int):
    """Yield the messages after_seq+1…up_to_seq in order, in lists of at most max_tokens.

    A message larger than max_tokens is a list of its own: it is still observed, alone.
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
                yield chunk
                chunk, tokens = [], 0
            chunk.append(message)
            tokens += message.token_count
        cursor = page[-1].seq
    if chunk:
        yield chunk
