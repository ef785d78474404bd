"""What an agent may retrieve, resolved and searched in one call: the one door to search.

The REST search, the MCP tools, the console's knowledge search and context assembly each make
one call here. This module turns what a caller names (scope names, an end user's external id, a
knowledge base's slug, a similarity floor or none) into what apps.search ranks (kinds, ids, a
Floor), and answers with apps.search's hits. Names that do not resolve are 404s naming them.
"""

import uuid
from dataclasses import dataclass

from apps.core.errors import NotFound
from apps.knowledge.selectors import knowledge_base_get, knowledge_base_list
from apps.search.models import ItemKind
from apps.search.scope import Scope
from apps.search.selectors import (
    Hit,
    QueryEmbedding,
    SearchHit,
    SearchResults,
    hits_by_id,
    query_embed,
    search,
    search_each_for_agent,
    search_for_agent,
    similarity_floor,
)
from apps.tenancy.selectors import resource_find
from apps.threads.selectors import messages_at, thread_check

# The scopes a caller names, and the kind of item each searches.
SCOPE_KINDS: dict[str, str] = {
    "messages": ItemKind.MESSAGE,
    "knowledge": ItemKind.CHUNK,
    "episodic": ItemKind.ENTRY,
    "notes": ItemKind.NOTE,
    "artifacts": ItemKind.ARTIFACT,
}
SCOPE_NAMES = tuple(SCOPE_KINDS)


def retrieve(
    *,
    agent,
    query: str,
    scopes: list[str],
    thread_id: uuid.UUID | None = None,
    resource: str | None = None,
    knowledge_base: str | None = None,
    knowledge_base_id: uuid.UUID | None = None,
    top_k: int = 10,
    message_range: tuple[int, int] | None = None,
    min_similarity: float | None = None,
) -> SearchResults:
    """Search the agent's memory for query: what POST /search, the search_memory tool and the
    console's knowledge search answer.

    scopes are names of SCOPE_KINDS; resource is an end user's external id (their messages and
    entries only); knowledge_base a base's slug (knowledge_base_id its id, for a caller that
    already holds the base), else every base of the project; message_range (before, after)
    defaults to the agent's recall range; min_similarity to its search_min_similarity.
    thread_id narrows messages to a thread of this agent's: a thread that is not one is a 404
    (checked only when no message hit already proves it the agent's).
    """
    resource_id = None
    if resource is not None:
        found = resource_find(project=agent.project, external_id=resource)
        if found is None:
            raise NotFound(f"No resource {resource!r} in this project.")
        resource_id = found.id
    bases: tuple[uuid.UUID, ...] = ()
    if knowledge_base_id is not None:
        bases = (knowledge_base_id,)
    elif knowledge_base is not None:
        bases = (knowledge_base_get(project=agent.project, slug=knowledge_base).id,)
    elif "knowledge" in scopes:
        bases = _project_bases(agent)
    results = search_for_agent(
        agent=agent,
        query=query,
        kinds=[SCOPE_KINDS[name] for name in scopes],
        thread_id=thread_id,
        resource_id=resource_id,
        knowledge_base_ids=bases,
        top_k=top_k,
        message_range=message_range,
        floor=similarity_floor(agent=agent, value=min_similarity),
        read_messages=messages_at,
    )
    # The message scope holds only this agent's items, so a message hit in the thread proves
    # it the agent's; the check's own query (about 1 ms of a 15 ms thread search) runs only
    # when none came.
    if thread_id is not None and not any(
        hit.type == "message" and hit.thread_id == thread_id for hit in results.hits
    ):
        thread_check(agent=agent, thread_id=thread_id)
    return results


@dataclass
class ContextHits:
    """What a context searched for: the query's embedding (once for all), each block's hits."""

    embedding: QueryEmbedding
    blocks: dict[str, list[Hit]]
    recall: list[Hit]


# The blocks of a context that are ranked for its query, and the kind each shows.
CONTEXT_BLOCKS: dict[str, str] = {
    "memory": ItemKind.ENTRY,
    "knowledge": ItemKind.CHUNK,
    "notes": ItemKind.NOTE,
}


def retrieve_for_context(
    *,
    agent,
    thread,
    query: str,
    top_k: dict[str, int],
    recall_top_k: int = 0,
    recall_range: tuple[int, int] = (0, 0),
) -> ContextHits:
    """Search what one context shows for its query, the query embedded once.

    top_k[block] for the blocks of CONTEXT_BLOCKS: the agent's approved entries for the
    thread's end user (or of no end user), the project's knowledge, the agent's and the
    project's shared notes — each ranked on its own, above the agent's similarity floor, as
    POST /search applies it. recall_top_k: the thread's own messages (recall), each with
    recall_range (before, after) messages around it.
    """
    embedding = query_embed(project_id=agent.project_id, query=query)
    counts: dict[str, int] = {
        CONTEXT_BLOCKS[block]: count for block, count in top_k.items() if count
    }
    if ItemKind.CHUNK in counts:
        bases = _project_bases(agent)
        if not bases:
            del counts[ItemKind.CHUNK]
    else:
        bases = ()
    found = {}
    if counts:
        found = search_each_for_agent(
            agent=agent,
            query=query,
            top_k=counts,
            resource_id=thread.resource_id,
            without_resource=thread.resource_id is None,
            knowledge_base_ids=bases,
            embedding=embedding,
            floor=similarity_floor(agent=agent, value=None),
        )
    recall = []
    if recall_top_k:
        recall = search_for_agent(
            agent=agent,
            query=query,
            kinds=[ItemKind.MESSAGE],
            thread_id=thread.id,
            top_k=recall_top_k,
            message_range=recall_range,
            embedding=embedding,
            read_messages=messages_at,
        ).hits
    blocks = {block: found.get(kind, []) for block, kind in CONTEXT_BLOCKS.items()}
    return ContextHits(embedding=embedding, blocks=blocks, recall=recall)


def threads_matching(*, query: str, project_id: uuid.UUID | None, limit: int) -> dict:
    """Return {thread id: its best message hit} among the limit best full-text matches of
    query in every thread (of one project, or all): an operator's filter, across agents."""
    scope = Scope(kind=ItemKind.MESSAGE, project_id=project_id)
    best: dict[uuid.UUID | None, SearchHit] = {}
    for hit in search(scopes=[scope], query=query, top_k=limit, signals=("lexical",)):
        best.setdefault(hit.item.thread_id, hit)  # best first: each thread keeps its best
    return best


def items_shown(*, kind: str, ids) -> dict[str, Hit]:
    """Return the items of one kind by their own ids (as text), as a search would show them:
    for re-reading what a stored context showed; the caller knows the ids to be its own."""
    return hits_by_id(kind=kind, ids=ids)


def _project_bases(agent) -> tuple[uuid.UUID, ...]:
    return tuple(knowledge_base_list(project=agent.project).values_list("id", flat=True))
