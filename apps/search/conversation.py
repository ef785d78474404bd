"""Conversation-aware ranking: a message's score is shared with the messages around it.

The answer to a question often sits beside the turn that matches its words (the reply after
the question) or elsewhere in the same session. So, once a message scope's candidates are fused,
each message gains

    neighbour_share · (the best score of the messages just before and after it, same session)
  + session_share   · (the best score of the other messages of its session)

from the fused scores (not from each other's gains: one step, no feedback). Scores never cross
threads. A message that was not a candidate can enter this way: the reply after a strong match.

Sessions. A session is a run, or a stretch of a thread with no pause longer than
session_gap_minutes. Only the best candidates and their neighbours are read, and for the best
three the weights.session_follow messages after them, where a question's answer usually is
(bounded by those numbers; a thread-wide scan would cost as much as the thread is long), so the
sessions are those these rows prove: two rows are in one session when they belong to the same
run, or when they come one after the other among the rows read of their thread (by seq) at most
session_gap_minutes apart; then, by the chain of such links. Since a thread's times rise with
its seq, every message between two such rows lies within that pause as well, so a link is
never wrong; two rows of one session that lie further apart, with no row read between them to
bridge the gap, are left unlinked. The approximation can therefore miss a session's share, never
give one across a pause. For neighbours (seq ± 1) the rule is exact.

A message that was no candidate enters by its gain while the scope's list holds fewer than
top_k messages, and beyond that only in place of a weaker match. A question whose words match
only the turn that raised a topic ("We did the cake tasting this morning.") so also answers with
the turns after it, where the outcome was said ("Then three tiers: lemon and elderflower...");
cut back to its candidates, as the list was before, it answered with that one turn and the
message range around it. On the multi-session set, full text (SQLite), recall@10 0.705 -> 0.723
and recall@20 0.738 -> 0.768 with this (session questions 0.70 -> 0.80); the older set
0.713 -> 0.719; the German and Spanish set unchanged. The cost is in precision: a query that
matches a message or two also answers with other turns of their sessions, after them and
marked by their `context` signal alone, where it answered with the matches only.
"""

from datetime import UTC, datetime

from apps.search.backends.common import MessageRow, message_neighbourhood
from apps.search.fusion import Fused, FusionWeights
from apps.search.scope import Scope

# The best candidates whose session is read weights.session_follow messages onwards.
_FOLLOWED = 3
_PER_MESSAGE = 0.001


def with_conversation(
    scope: Scope,
    fused: list[Fused],
    weights: FusionWeights,
    depth: int,
    created: dict[int, datetime],
) -> list[Fused]:
    """Return the scope's fused messages with their conversation shares, best first, all of
    them: the caller cuts the list (to top_k, or the number of candidates if more).

    The depth best candidates and their neighbours take part; the others keep their scores.
    created (item id -> created_at) gains the messages that enter by their share alone, so
    that the caller can give them the boost of the period a query names, as the candidates of
    that period have it (time_boost.py): the reply after "Time to plan the next block of
    training" answers "what did the block we planned in December add?", and without the boost
    was ranked below every other December turn (multi-session set, full text: temporal
    questions' recall@10 0.712 -> 0.788, all 0.681 -> 0.705; the older set and the German and
    Spanish one unchanged).
    """
    if not fused or (weights.neighbour_share <= 0 and weights.session_share <= 0):
        return fused
    rows = message_neighbourhood(
        scope,
        [entry.item_id for entry in fused[:depth]],
        followed=_FOLLOWED,
        follow=weights.session_follow,
    )
    scores = {entry.item_id: entry.score for entry in fused}
    by_id = {entry.item_id: entry for entry in fused}
    session = _sessions(rows, weights.session_gap_minutes * 60)
    best_two = _best_two_per_session(rows, session, scores)
    by_place = {(row.thread_id, row.seq): row for row in rows}
    for row in rows:
        if row.item_id in by_id:
            by_id[row.item_id].place = (row.thread_id, row.seq)
        neighbour = _best_neighbour(row, by_place, session, scores)
        others = best_two.get(session[row.item_id], [])
        other = next((pair for pair in others if pair[1].item_id != row.item_id), None)
        gains = {}
        if neighbour is not None and weights.neighbour_share > 0:
            gains["neighbour"] = (weights.neighbour_share * scores[neighbour.item_id], neighbour)
        if other is not None and weights.session_share > 0:
            # The nearer the message it comes from, the larger: a thousandth less per message
            # between them (at most 2 %), so that of the messages a session lifts alike, those
            # next to its best come first.
            nearness = 1 - _PER_MESSAGE * min(abs(row.seq - other[1].seq), 20)
            gains["session"] = (weights.session_share * other[0] * nearness, other[1])
        gains = {name: gain for name, gain in gains.items() if gain[0] > 0}
        if not gains:
            continue
        entry = by_id.get(row.item_id)
        if entry is None:  # not a candidate: it enters by its context alone
            entry = Fused(row.item_id, kind=scope.kind, place=(row.thread_id, row.seq))
            by_id[row.item_id] = entry
            created[row.item_id] = datetime.fromtimestamp(row.created, UTC)
        entry.score += sum(gain for gain, _ in gains.values())
        entry.signals["context"] = {
            **{name: round(gain, 6) for name, (gain, _) in gains.items()},
            "from": {name: source.seq for name, (_, source) in gains.items()},
        }
    return sorted(by_id.values(), key=lambda e: (-e.score, -e.item_id))


def _sessions(rows: list[MessageRow], gap_seconds: float) -> dict[int, object]:
    """Return each row's session: a label shared by the rows proven to be in one session."""
    parent = {row.item_id: row.item_id for row in rows}

    def root(item_id):
        while parent[item_id] != item_id:
            parent[item_id] = parent[parent[item_id]]
            item_id = parent[item_id]
        return item_id

    def join(a: int, b: int) -> None:
        parent[root(a)] = root(b)

    run_member: dict[object, int] = {}
    previous: MessageRow | None = None
    for row in sorted(rows, key=lambda r: (str(r.thread_id), r.seq)):
        if row.run_id is not None:
            join(row.item_id, run_member.setdefault(row.run_id, row.item_id))
        if (
            previous is not None
            and previous.thread_id == row.thread_id
            and abs(row.created - previous.created) <= gap_seconds
        ):
            join(row.item_id, previous.item_id)
        previous = row
    return {item_id: root(item_id) for item_id in parent}


def _best_two_per_session(
    rows: list[MessageRow], session: dict[int, object], scores: dict[int, float]
) -> dict[object, list[tuple[float, MessageRow]]]:
    """Return each session's two best-scored rows (the best other than a row is among them)."""
    best: dict[object, list[tuple[float, MessageRow]]] = {}
    for row in rows:
        score = scores.get(row.item_id, 0.0)
        if score <= 0:
            continue
        top = best.setdefault(session[row.item_id], [])
        top.append((score, row))
        top.sort(key=lambda pair: (-pair[0], -pair[1].item_id))
        del top[2:]
    return best


def _best_neighbour(
    row: MessageRow,
    by_place: dict[tuple, MessageRow],
    session: dict[int, object],
    scores: dict[int, float],
) -> MessageRow | None:
    """Return the better-scored of the row's neighbours in its session, if any has a score."""
    found = None
    for seq in (row.seq - 1, row.seq + 1):
        other = by_place.get((row.thread_id, seq))
        if other is None or session[other.item_id] != session[row.item_id]:
            continue
        if scores.get(other.item_id, 0.0) > (scores.get(found.item_id, 0.0) if found else 0.0):
            found = other
    return found
