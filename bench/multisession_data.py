"""The multi-session labelled set: long conversations, one thread each, sessions apart in time.

bench/data/multisession_source.txt holds the hand-written text: per conversation its people, its
domain filler and its blocks (turns kept together, with the turns that answer marked and the
questions asked about them); bench/retrieval_source.txt's generic filler is shared. This module
lays each conversation out with a seeded RNG as one thread of sessions (a sitting of minutes
between turns; sittings hours to weeks apart; some conversations load each sitting as a run) and
writes bench/data/multisession_set.json, which is committed. The same seed and sources always
give the same file. Rebuild it with:

    .venv/bin/python bench/multisession_data.py [--seed 20251123] [--out PATH]

Questions carry their type (exact, paraphrase, adjacent, session, multi_hop, temporal, speaker)
and their relevant turns as (session id, turn index, grade): grade 2 answers, grade 1 supports
(the turn that shares the question's words when the answer sits beside it or later in the
session). Temporal questions that name a date keep a template and the anchor moment, so a loader
that moves the timestamps can name the moved date (apps.evaluation.retrieval.question_text).
"""

import random
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from retrieval_data import SOURCE as GENERIC_SOURCE
from retrieval_data import Deck, Pair, build_and_write, fill_pair, parse_source

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # apps.evaluation.dates: the placeholders' one definition
from apps.evaluation.dates import date_fields  # noqa: E402

SOURCE = HERE / "data" / "multisession_source.txt"
SET_PATH = HERE / "data" / "multisession_set.json"
SEED = 20251123
SESSIONS = 13  # per conversation; the last three are last week's, yesterday's and the latest
PAIRS_PER_SESSION = (11, 15)  # filler tops each session up to this many user/assistant pairs
MIN_TURNS = 300
OWN_FILLER_SHARE = 0.6  # the rest comes from the generic filler
INSERTED_FILLER = (1, 3)  # pairs put where a block says "..."
TURN_RE = re.compile(r"(U|A)(?:\(([^)]+)\))?([!~]?)")
WHEN = ("any", "month", "day", "last_week", "yesterday")


@dataclass
class Part:
    """Turns kept together in one session, in order; "..." lines become a few filler pairs."""

    turns: list = field(default_factory=list)  # (role, name, grade, text) or "..."
    questions: list = field(default_factory=list)  # (type, text)
    when: str = "any"


@dataclass
class Block:
    """One or more parts about one topic; each later part lands in a later session."""

    key: str
    parts: list[Part] = field(default_factory=lambda: [Part()])


@dataclass
class Conversation:
    key: str
    meta: dict = field(default_factory=dict)
    slots: dict = field(default_factory=dict)
    filler: list[Pair] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)

    @property
    def people(self) -> list[str]:
        return [p.strip() for p in self.meta.get("people", "").split("|") if p.strip()]


# --- Parsing the source ---------------------------------------------------------------------


def parse(text: str) -> list[Conversation]:
    """Return the conversations of the source text, in order."""
    conversations: list[Conversation] = []
    section = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        header = re.fullmatch(r"\[(\w+)(?: ([\w-]+))?\]", line)
        if header:
            section = header.group(1)
            if section == "conversation":
                conversations.append(Conversation(header.group(2)))
            elif section == "block":
                conversations[-1].blocks.append(Block(header.group(2)))
            continue
        try:
            add_line(conversations[-1], section, line)
        except (ValueError, IndexError) as error:
            raise ValueError(f"line {number}: {error}: {line!r}") from None
    return conversations


def add_line(conversation: Conversation, section: str, line: str) -> None:
    """Add one line to the conversation's current section."""
    if section == "block":
        add_block_line(conversation.blocks[-1], line)
        return
    tag, _, value = line.partition(": ")
    if section == "conversation":
        if tag.startswith("slot "):
            values = [v.strip() for v in value.split("|")]
            conversation.slots[tag.removeprefix("slot ")] = values
        else:
            conversation.meta[tag] = value.strip()
    elif section == "filler" and tag == "U":
        conversation.filler.append(Pair(value, ""))
    elif section == "filler" and tag == "A":
        conversation.filler[-1].reply = value
    else:
        raise ValueError(f"unexpected line in [{section}]")


def add_block_line(block: Block, line: str) -> None:
    """Add a turn, a question, a "when", a "..." or a "---" (next part) to a block."""
    part = block.parts[-1]
    if line == "---":
        block.parts.append(Part())
        return
    if line == "...":
        part.turns.append("...")
        return
    tag, _, value = line.partition(": ")
    if tag == "when":
        if value not in WHEN:
            raise ValueError(f"when: one of {WHEN}")
        part.when = value
    elif tag.startswith("? "):
        part.questions.append((tag.removeprefix("? "), value))
    elif TURN_RE.fullmatch(tag):
        role, name, mark = TURN_RE.fullmatch(tag).groups()
        grade = {"!": 2, "~": 1, "": 0}[mark]
        part.turns.append(("user" if role == "U" else "assistant", name or "", grade, value))
    else:
        raise ValueError("expected U:, A:, ? type:, when:, ... or ---")


# --- Laying out one conversation ------------------------------------------------------------


def session_starts(rng: random.Random, start: date) -> list[datetime]:
    """Return the sessions' start times: a random walk, then last week, yesterday and the latest.

    Gaps: a few hours on the same day, a few days, or a few weeks. The latest session falls on a
    Tuesday to Saturday, so "yesterday" is in its own week and a day of the week before is
    "last week" by either reading (the calendar week before, or the last seven days or so).
    """
    moment = datetime(start.year, start.month, start.day, rng.randint(8, 11), tzinfo=UTC)
    moments = [moment + timedelta(minutes=rng.randint(0, 59))]
    while len(moments) < SESSIONS - 3:
        roll = rng.random()
        last = moments[-1]
        if roll < 0.3 and last.hour < 17:
            moment = last + timedelta(hours=rng.randint(2, 5), minutes=rng.randint(0, 59))
        else:
            days = rng.randint(1, 5) if roll < 0.65 else rng.randint(8, 30)
            moment = datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days)
            moment += timedelta(hours=rng.randint(8, 19), minutes=rng.randint(0, 59))
        moments.append(moment)
    latest = (moments[-1] + timedelta(days=rng.randint(16, 22))).date()
    while latest.weekday() not in (1, 2, 3, 4, 5):
        latest += timedelta(days=1)
    monday = latest - timedelta(days=latest.weekday())
    for day in (monday - timedelta(days=7 - rng.randint(0, 4)), latest - timedelta(1), latest):
        at = datetime(day.year, day.month, day.day, rng.randint(8, 18), tzinfo=UTC)
        moments.append(at + timedelta(minutes=rng.randint(0, 59)))
    return moments


def place_blocks(rng: random.Random, conversation: Conversation, starts: list[datetime]) -> dict:
    """Return, per session index, the parts placed in it (in block order)."""
    placed: dict[int, list[Part]] = {index: [] for index in range(len(starts))}
    fixed = {"last_week": SESSIONS - 3, "yesterday": SESSIONS - 2}
    older = list(range(SESSIONS - 3))
    for block in conversation.blocks:
        free = [p for p in block.parts if p.when not in fixed]
        chosen = choose_sessions(rng, [p.when for p in free], older, starts, block.key)
        for part, index in zip(free, chosen, strict=True):
            placed[index].append(part)
        for part in block.parts:
            if part.when in fixed:
                placed[fixed[part.when]].append(part)
    for parts in placed.values():
        rng.shuffle(parts)
    return placed


def choose_sessions(rng, whens: list[str], older: list[int], starts: list[datetime], key: str):
    """Return increasing session indexes, one per part.

    When a part is asked about by its month (or day), every part of the block lands in a
    different month (or day), so the date names one of them.
    """
    if not whens:
        return []
    for _ in range(2000):
        chosen = sorted(rng.sample(older, len(whens)))
        months = {(starts[i].year, starts[i].month) for i in chosen}
        days = {starts[i].date() for i in chosen}
        if ("month" not in whens or len(months) == len(chosen)) and (
            "day" not in whens or len(days) == len(chosen)
        ):
            return chosen
    raise ValueError(f"block {key}: no sessions with distinct dates for {whens}")


@dataclass
class Laid:
    """A turn laid out, and where its block's marks and questions point."""

    role: str
    name: str
    text: str
    grade: int = 0
    part: Part | None = None


class Filler:
    """A conversation's filler: its own pairs, the generic ones, slots, and who speaks."""

    def __init__(self, rng, conversation: Conversation, generic, generic_slots: dict):
        self.rng = rng
        self.own, self.generic = Deck(rng, conversation.filler), Deck(rng, generic)
        self.slots = {**generic_slots, **conversation.slots}
        self.people = conversation.people

    def pair(self) -> list[Laid]:
        deck = self.own if self.rng.random() < OWN_FILLER_SHARE else self.generic
        user, reply = fill_pair(deck.draw(), {}, self.slots, self.rng)
        return [Laid("user", self.speaker(), user), Laid("assistant", "", reply)]

    def speaker(self, name: str = "") -> str:
        """The named speaker, or (with several people) mostly the first of them."""
        if name or not self.people:
            return name
        if len(self.people) > 1 and self.rng.random() < 0.35:
            return self.rng.choice(self.people[1:])
        return self.people[0]


def lay_session(rng: random.Random, parts: list[Part], filler: Filler) -> list[Laid]:
    """Return the session's turns: its parts in order, filler between and where "..." says."""
    chunks: list[list[Laid]] = []
    for part in parts:
        turns: list[Laid] = []
        for item in part.turns:
            if item == "...":
                for _ in range(rng.randint(*INSERTED_FILLER)):
                    turns += filler.pair()
                continue
            role, name, grade, text = item
            speaker = filler.speaker(name) if role == "user" else name
            turns.append(Laid(role, speaker, text, grade, part))
        chunks.append(turns)
    target = rng.randint(*PAIRS_PER_SESSION) * 2
    while sum(map(len, chunks)) < target:
        chunks.insert(rng.randint(0, len(chunks)), filler.pair())
    return [turn for chunk in chunks for turn in chunk]


def timestamps(rng: random.Random, start: datetime, turns: list[Laid]) -> list[datetime]:
    """A reply comes seconds after a user turn; the next user turn within a few minutes."""
    moments, moment = [], start
    for turn in turns:
        moments.append(moment)
        moment += timedelta(seconds=rng.randint(4, 40) if turn.role == "user" else 0)
        moment += timedelta(seconds=rng.randint(30, 420) if turn.role == "assistant" else 0)
    return moments


def build_conversation(seed: int, conversation: Conversation, generic, generic_slots: dict):
    """Return one conversation (sessions of turns) and its questions."""
    rng = random.Random(f"{seed}:{conversation.key}")
    starts = session_starts(rng, date.fromisoformat(conversation.meta["start"]))
    placed = place_blocks(rng, conversation, starts)
    filler = Filler(rng, conversation, generic, generic_slots)
    sessions, where = [], {}  # where: id(part) -> [(session id, turn index, grade, moment)]
    runs = conversation.meta.get("runs") == "yes"
    for index, start in enumerate(starts):
        session_id = f"{conversation.key}-s{index + 1:02d}"
        laid = lay_session(rng, placed[index], filler)
        moments = timestamps(rng, start, laid)
        turns = []
        for number, (turn, moment) in enumerate(zip(laid, moments, strict=True)):
            stored = {"role": turn.role, "content": turn.text, "created_at": moment.isoformat()}
            if turn.name:
                stored["name"] = turn.name
            turns.append(stored)
            if turn.part is not None:
                marks = where.setdefault(id(turn.part), [])
                marks.append((session_id, number, turn.grade, moment))
        sessions.append({"id": session_id, "run": runs, "turns": turns})
    questions = []
    for block in conversation.blocks:
        questions += block_questions(conversation.key, block, where)
    data = {
        "id": conversation.key,
        "user": conversation.people[0] if conversation.people else conversation.meta["name"],
        "resource": conversation.meta["resource"],
        "thread": "single",
        "sessions": sessions,
    }
    return data, questions


def block_questions(conversation_key: str, block: Block, where: dict) -> list[dict]:
    """Return the block's questions with their relevant turns (multi_hop: every part's)."""
    questions = []
    for part in block.parts:
        marks = where[id(part)]
        for kind, text in part.questions:
            parts = block.parts if kind == "multi_hop" else [part]
            relevant = [
                {"session": s, "turn": t, "grade": g}
                for p in parts
                for s, t, g, _ in where[id(p)]
                if g
            ]
            if not any(r["grade"] == 2 for r in relevant):
                raise ValueError(f"block {block.key}: question {text!r} has no answer marked !")
            if kind == "multi_hop" and sum(r["grade"] == 2 for r in relevant) < 2:
                raise ValueError(f"block {block.key}: a multi_hop question needs two answers")
            question = {
                "conversation": conversation_key,
                "type": kind,
                "topic": block.key,
                "question": text,
                "relevant": relevant,
            }
            if "{" in text:
                anchor = marks[0][3]
                question["question"] = text.format_map(date_fields(anchor))
                question["template"], question["anchor"] = text, anchor.isoformat()
            questions.append(question)
    return questions


# --- The whole set --------------------------------------------------------------------------


def build_set(seed: int = SEED, source: Path = SOURCE) -> dict:
    """Return the set built from the sources with this seed."""
    generic = parse_source(GENERIC_SOURCE.read_text())["generic"]
    conversations, questions = [], []
    for conversation in parse(source.read_text()):
        built, asked = build_conversation(seed, conversation, generic.filler, generic.slots)
        turns = sum(len(s["turns"]) for s in built["sessions"])
        if turns < MIN_TURNS:
            raise ValueError(f"conversation {conversation.key} has {turns} turns < {MIN_TURNS}")
        conversations.append(built)
        questions += asked
    questions = [{"id": f"m{n:03d}", **q} for n, q in enumerate(questions, start=1)]
    return {
        "name": "memory-console multi-session retrieval set",
        "seed": seed,
        "source": "bench/data/multisession_source.txt + retrieval_source.txt (generic filler)",
        "built_by": "bench/multisession_data.py",
        "grades": {"2": "a message that answers", "1": "the turn matching the question's words"},
        "conversations": conversations,
        "questions": questions,
    }


def main() -> None:
    """Build the set, write it, print its summary."""
    build_and_write(build_set, SEED, SET_PATH, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
