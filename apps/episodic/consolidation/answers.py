"""Read the consolidation model's answers: which messages, which candidates, which entries."""

from apps.episodic.models import LIVE_STATUSES
from apps.providers.llm import LLMOutputError


def replaced_entries(value, similar: list[list], model: str) -> dict[int, object]:
    """Return {candidate index: entry} for the model's supersedes answer.

    Only an entry shown beside that candidate, and still live, can be named; anything else is
    ignored (the candidate is stored without replacing anything).
    """
    if value in (None, {}, []):
        return {}
    if not isinstance(value, dict):
        raise LLMOutputError(f"model {model} answered supersedes that is not an object")
    replaced = {}
    for key, entry_id in value.items():
        index = int(key) if isinstance(key, str) and key.isdigit() else None
        if index is None or index >= len(similar) or not isinstance(entry_id, str):
            continue
        shown = {str(entry.pk): entry for entry in similar[index]}
        entry = shown.get(entry_id.strip())
        if entry is not None and entry.status in LIVE_STATUSES:
            replaced[index] = entry
    return replaced


def seqs_among(value, allowed, model: str, key: str) -> set[int]:
    """Return the whole numbers of a model's list that are among allowed."""
    if not isinstance(value, list) or not all(
        isinstance(item, int) and not isinstance(item, bool) for item in value
    ):
        raise LLMOutputError(f"model {model} answered {key} that is not a list of numbers")
    return {item for item in value if item in allowed}
