"""Reads of observational memory and compaction summaries, for context assembly and the API."""

from django.db.models import Count, Max

from apps.observations.models import Observation, ObservationFailure, ThreadSummary


def observations_active(*, thread) -> list[Observation]:
    """Return the observations that stand for messages 1…K now, ordered by first_seq."""
    return list(
        Observation.objects.filter(thread=thread, superseded_by__isnull=True).order_by("first_seq")
    )


def observed_up_to(*, thread) -> int:
    """Return K: the last seq the active observations cover (0 when there are none)."""
    active = Observation.objects.filter(thread=thread, superseded_by__isnull=True)
    return active.aggregate(last=Max("last_seq"))["last"] or 0


def observation_list(*, thread, status: str | None = None):
    """Return the thread's observations, active and superseded (or only one of them)."""
    observations = Observation.objects.filter(thread=thread)
    if status == "active":
        observations = observations.filter(superseded_by__isnull=True)
    elif status == "superseded":
        observations = observations.filter(superseded_by__isnull=False)
    return observations


def summary_latest(*, thread) -> ThreadSummary | None:
    """Return the thread's newest compaction summary, or None before the first."""
    return ThreadSummary.objects.filter(thread=thread).order_by("-version").first()


def observation_failures(*, thread):
    """Return the model failures recorded for the thread, newest first."""
    return ObservationFailure.objects.filter(thread=thread).order_by("-id")


def observations_by_id(*, thread, ids) -> dict[str, Observation]:
    """Return the thread's observations with these ids, active or superseded, by id as text."""
    return {str(o.id): o for o in Observation.objects.filter(thread=thread, id__in=list(ids))}


def summaries_by_id(*, thread, ids) -> dict[str, ThreadSummary]:
    """Return the thread's summaries with these ids, by id as text."""
    return {str(s.id): s for s in ThreadSummary.objects.filter(thread=thread, id__in=list(ids))}


def observations_active_sizes(*, thread, limit: int) -> tuple[list, int]:
    """Return the newest `limit` active observations, ordered by first_seq, and how many older
    ones were left unread.

    The rows are named tuples (id, first_seq, last_seq, tokens), without their text: a context
    keeps the text of observations it has shown (an observation never changes), and reads the
    rest with observation_texts(). Building model instances of hundreds of rows took a third of
    a context request.
    """
    active = Observation.objects.filter(thread=thread, superseded_by__isnull=True)
    sizes = active.order_by("-first_seq").values_list(
        "id", "first_seq", "last_seq", "tokens", named=True
    )
    rows = list(sizes[: limit + 1])
    unread = active.count() - limit if len(rows) > limit else 0
    return rows[:limit][::-1], unread


def observations_active_marker(*, thread) -> tuple[int, object]:
    """Return what changes whenever the thread's active observations do: how many there are and
    when the newest of them was written (the observer and the reflector only ever add rows, a
    reflection supersedes the rows it replaces, and rows only go by being deleted)."""
    active = Observation.objects.filter(thread=thread, superseded_by__isnull=True)
    marker = active.aggregate(count=Count("id"), newest=Max("created_at"))
    return marker["count"], marker["newest"]


# Ids per query: a reflector threshold of millions of tokens can leave tens of thousands of
# active observations, more than SQLite takes as parameters of one statement.
_TEXTS_PER_QUERY = 1000


def observation_texts(*, thread, ids) -> dict:
    """Return the content of the thread's observations with these ids, by id."""
    ids, texts = list(ids), {}
    for start in range(0, len(ids), _TEXTS_PER_QUERY):
        batch = ids[start : start + _TEXTS_PER_QUERY]
        rows = Observation.objects.filter(thread=thread, id__in=batch)
        texts.update(rows.values_list("id", "content"))
    return texts
