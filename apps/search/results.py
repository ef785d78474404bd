"""The search answer: one definition that POST /api/v1/search and the search_memory tool send.

The models are the contract. search_answer() reads them straight from the search's hits (the
fields of selectors.Hit by name) and writes them as JSON-ready data (UUIDs and datetimes as
text, as the API's renderer writes them), so both doors send the same fields with the same
values; the OpenAPI schema is generated from the same models (apps/api/schema.py).

Cost: 0.23-0.4 ms for an answer of 10 message hits with 19 messages around them (validated
from the hits, then dumped), where a hand-built dict took 0.07-0.13 ms and DRF's serializer
1.4 ms, of an 8-17 ms thread search (POST /search in-process, SQLite, same hour; the machine's
load moved both): no second renderer is kept for those 0.15-0.3 ms.
"""

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, TypeAdapter, computed_field

from apps.search.selectors import MIN_SIMILARITY_IGNORED, VECTORS_UNAVAILABLE, SearchResults

WarningCode = Literal["vectors_unavailable", "min_similarity_ignored"]
# The codes the search can give (selectors.py), each documented.
assert {VECTORS_UNAVAILABLE["code"], MIN_SIMILARITY_IGNORED["code"]} == set(get_args(WarningCode))
# A message's, entry's, note's or artifact's id is a UUID, a chunk's an integer: sent as text.
ItemId = Annotated[uuid.UUID | int, PlainSerializer(str, return_type=str)]


class SearchContextMessage(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    seq: int
    role: str
    kind: str
    name: str
    content: str
    payload: Any
    created_at: datetime


class SearchContext(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    before: list[SearchContextMessage]
    after: list[SearchContextMessage]


class SearchResult(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    type: Literal["message", "knowledge", "episodic", "note", "artifact"]
    id: ItemId = Field(description="The message, chunk, entry, note or artifact id.")
    content: str
    score: float = Field(description="Fused score; higher is better.")
    signals: dict[str, Any] = Field(
        description="Per signal: rank and raw score (and normalized, where scores are fused so); "
        "recency: age; time: the window of days the query names and 1 if the message is inside "
        "it, else 0; context (messages): the score gained from the neighbour and the session, "
        "and the seq of the message each came from."
    )
    thread_id: uuid.UUID | None
    message_id: uuid.UUID | None
    seq: int | None
    role: str | None = Field(description="Message hits: the message's role.")
    kind: str | None = Field(description="Message hits: message, tool_call…")
    name: str | None = Field(description="Message hits: the tool's name.")
    payload: Any = Field(description="Message hits: the payload.")
    metadata: dict[str, Any]
    context: SearchContext | None = Field(
        description="Message hits: the messages before and after it."
    )

    # mypy does not take a decorator above @property; pydantic's documented way is this one.
    @computed_field(  # type: ignore[prop-decorator]
        description="Note hits: the note's path (as in metadata); null for others."
    )
    @property
    def path(self) -> str | None:
        # search_memory has always given it beside the score.
        return self.metadata["path"] if self.type == "note" else None


class SearchWarning(BaseModel):
    code: WarningCode
    message: str


class SearchAnswer(BaseModel):
    results: list[SearchResult]
    warnings: list[SearchWarning] = Field(
        default_factory=list,
        description="Present (and not empty) when results were ranked without a signal, such "
        "as vectors when the embedder failed.",
    )


_RESULTS = TypeAdapter(list[SearchResult])


def search_answer(found: SearchResults) -> dict:
    """Return the answer to a search as JSON-ready data: its results, and its warnings if any."""
    results = _RESULTS.validate_python(found.hits, from_attributes=True)
    answer: dict[str, Any] = {"results": _RESULTS.dump_python(results, mode="json")}
    if found.warnings:
        answer["warnings"] = found.warnings
    return answer
