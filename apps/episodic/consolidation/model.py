"""Judge a batch of messages with a chat model: is_useful → rewrite_memory → create_memory.

1. is_useful: which of the batch's messages are worth remembering (their seqs).
2. rewrite_memory: the useful messages rewritten as memories, each naming the seqs it stands
   for and cut at a sentence to episodic_max_entry_length.
3. create_memory: each memory shown beside the scope's closest entries (pending ones too);
   the model says which to create, and which entry each one updates (supersedes).
A malformed answer, or a memory that drops an identifier or an error of its messages, raises
LLMOutputError: the caller then judges the batch by the extractive rules instead.
"""

from dataclasses import replace

from apps.episodic.consolidation.answers import replaced_entries, seqs_among
from apps.episodic.consolidation.fallback import cap_at_sentence
from apps.episodic.prompts import consolidation_create as create_memory
from apps.episodic.prompts import consolidation_is_useful as is_useful
from apps.episodic.prompts import consolidation_rewrite as rewrite_memory
from apps.providers.answers import answer_problem
from apps.providers.llm import ChatModel, LLMOutputError
from apps.search.scope import Scope
from apps.search.selectors import query_vector, search

SIMILAR_SHOWN = 3  # existing entries shown to create_memory beside each candidate
LLM_VERSION = f"{is_useful.VERSION}+{rewrite_memory.VERSION}+{create_memory.VERSION}"


def batch_judge_with_model(*, thread, batch, config, chat: ChatModel, candidate) -> list:
    """Return the memories the model chose of the batch (made by candidate(**fields))."""
    by_seq = {message.seq: message for message in batch}
    answer = chat.complete_json(is_useful.is_useful_prompt(batch), required_keys=("useful",))
    useful = seqs_among(answer["useful"], by_seq, chat.model, "useful")
    if not useful:
        return []
    kept = [by_seq[seq] for seq in sorted(useful)]
    answer = chat.complete_json(rewrite_memory.rewrite_prompt(kept), required_keys=("memories",))
    drafts = _memories(answer["memories"], set(useful), chat.model, config, candidate)
    for draft in drafts:
        said = "\n".join(
            by_seq[seq].content or ""
            for seq in range(draft.first_seq, draft.last_seq + 1)
            if seq in useful
        )
        # A memory is a rewrite, not a summary: it may be longer than one short message, but
        # it keeps every identifier and error of the messages it stands for.
        problem = answer_problem(said, draft.content, may_grow=True)
        if problem:
            raise LLMOutputError(f"model {chat.model}: the memory {draft.content!r}: {problem}")
    if not drafts:
        return []
    similar = [_similar_entries(thread, draft.content) for draft in drafts]
    shown = [
        (draft.content, [(str(entry.pk), entry.content) for entry in entries])
        for draft, entries in zip(drafts, similar, strict=True)
    ]
    answer = chat.complete_json(create_memory.create_prompt(shown), required_keys=("create",))
    chosen = seqs_among(answer["create"], range(len(drafts)), chat.model, "create")
    replaced = replaced_entries(answer.get("supersedes"), similar, chat.model)
    return [
        replace(draft, supersedes=replaced.get(index))
        for index, draft in enumerate(drafts)
        if index in chosen
    ]


def _memories(value, useful: set[int], model: str, config, candidate) -> list:
    if not isinstance(value, list):
        raise LLMOutputError(f"model {model} answered memories that are not a list")
    limit = config["episodic_max_entry_length"]
    drafts = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            raise LLMOutputError(f"model {model} answered a memory without content text")
        content = item["content"].strip()
        if not content:
            continue
        seqs = item.get("seqs")
        named = {seq for seq in seqs if seq in useful} if isinstance(seqs, list) else set()
        named = named or useful  # a memory that names no judged message covers them all
        drafts.append(
            candidate(
                content=cap_at_sentence(content, limit),
                first_seq=min(named),
                last_seq=max(named),
            )
        )
    return drafts


def _similar_entries(thread, content: str) -> list:
    """Return the thread's scope's entries closest to content, pending ones included."""
    project_id = thread.agent.project_id
    scope = Scope(
        kind="entry",
        project_id=project_id,
        agent_id=thread.agent_id,
        resource_id=thread.resource_id,
        without_resource=thread.resource_id is None,
        visible_only=False,
    )
    vector = query_vector(project_id=project_id, query=content)
    hits = search(scopes=[scope], query=content, top_k=SIMILAR_SHOWN, vector=vector)
    return [hit.item.entry for hit in hits if hit.item.entry_id]
