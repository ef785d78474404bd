"""The multilingual labelled set: German and Spanish conversations, asked in their language.

bench/data/multilingual_source.txt holds the hand-written text: per conversation its pairs (a
user turn and the reply, the answering turn marked, its questions) and per language a shared
filler. This module lays each conversation out with a seeded RNG as one thread of sessions days
apart (a few minutes between turns), the marked pairs spread over the sessions among filler,
and writes bench/data/multilingual_set.json, which is committed. The same seed and source always
give the same file. Rebuild it with:

    .venv/bin/python bench/multilingual_data.py [--seed 20261127] [--out PATH]

Questions are of two types: `inflected` asks with other forms of the answer's words (plural for
singular, another case or tense: "Rechnungen" for "Rechnung", "facturas" for "factura"), which
an English stemmer leaves apart; `exact` with the answer's own words. Each lists its relevant
turns as (session id, turn index, grade): grade 2 the turn that answers, grade 1 the other turn
of its pair. bench/retrieval.py measures it with `--set bench/data/multilingual_set.json`.
"""

import random
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from retrieval_data import build_and_write

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "data" / "multilingual_source.txt"
SET_PATH = HERE / "data" / "multilingual_set.json"
SEED = 20261127
SESSIONS = 8  # per conversation
SESSION_GAP_DAYS = (2, 9)
PAIRS_PER_SESSION = (12, 16)  # filler tops each session up to this many pairs


@dataclass
class Pair:
    user: str
    reply: str
    answer: str = ""  # "user" or "assistant": the turn the questions are answered by
    questions: list[tuple[str, str]] = field(default_factory=list)  # (type, text)


@dataclass
class Conversation:
    key: str
    user: str
    resource: str
    language: str
    start: date
    pairs: list[Pair] = field(default_factory=list)


def parse(text: str) -> tuple[list[Conversation], dict[str, list[Pair]]]:
    """Return the conversations of the source and each language's filler pairs."""
    conversations: list[Conversation] = []
    filler: dict[str, list[Pair]] = {}
    pairs: list[Pair] | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("=="):
            fields = [part.strip() for part in line[2:].split("|")]
            if fields[0] == "filler":
                pairs = filler.setdefault(fields[1], [])
            else:
                key, user, resource, language, start = fields
                conversation = Conversation(
                    key, user, resource, language, date.fromisoformat(start)
                )
                conversations.append(conversation)
                pairs = conversation.pairs
        elif line.startswith("+"):
            answer = "user" if line.startswith("+!") else ""
            pairs.append(Pair(user=line.lstrip("+!").strip(), reply="", answer=answer))
        elif line.startswith("-"):
            pairs[-1].reply = line.lstrip("-!").strip()
            if line.startswith("-!"):
                pairs[-1].answer = "assistant"
        elif line.startswith("?"):
            kind, question = (part.strip() for part in line[1:].split("|", 1))
            pairs[-1].questions.append((kind, question))
        else:
            raise ValueError(f"cannot read the source line {line!r}")
    return conversations, filler


def build_conversation(seed: int, conversation: Conversation, filler: list[Pair]):
    """Return one conversation laid out as sessions, and its questions."""
    rng = random.Random(f"{seed}:{conversation.key}")
    marked = list(conversation.pairs)
    rng.shuffle(marked)
    per_session = [marked[index::SESSIONS] for index in range(SESSIONS)]
    deck = list(filler)
    rng.shuffle(deck)
    day = conversation.start
    sessions, questions = [], []
    for index, own in enumerate(per_session):
        session_id = f"{conversation.key}-s{index + 1:02}"
        pairs = list(own)
        while len(pairs) < rng.randint(*PAIRS_PER_SESSION):
            if not deck:
                deck = list(filler)
                rng.shuffle(deck)
            pairs.insert(rng.randint(0, len(pairs)), deck.pop())
        moment = datetime.combine(day, time(rng.randint(7, 20), rng.randint(0, 59)), UTC)
        turns = []
        for pair in pairs:
            if pair.questions:
                questions += pair_questions(conversation.key, session_id, len(turns), pair)
            for role, content in (("user", pair.user), ("assistant", pair.reply)):
                turn = {"role": role, "content": content, "created_at": moment.isoformat()}
                if role == "user":
                    turn["name"] = conversation.user
                turns.append(turn)
                moment += timedelta(seconds=rng.randint(20, 240))
        sessions.append({"id": session_id, "run": False, "turns": turns})
        day += timedelta(days=rng.randint(*SESSION_GAP_DAYS))
    record = {
        "id": conversation.key,
        "user": conversation.user,
        "resource": conversation.resource,
        "language": conversation.language,
        "thread": "single",
        "sessions": sessions,
    }
    return record, questions


def pair_questions(key: str, session_id: str, first_turn: int, pair: Pair) -> list[dict]:
    """Return the questions of a marked pair whose user turn is first_turn of the session."""
    answer = first_turn + (pair.answer == "assistant")
    support = first_turn + (pair.answer != "assistant")
    relevant = [
        {"session": session_id, "turn": answer, "grade": 2},
        {"session": session_id, "turn": support, "grade": 1},
    ]
    return [
        {"conversation": key, "type": kind, "question": text, "relevant": relevant}
        for kind, text in pair.questions
    ]


def build_set(seed: int = SEED, source: Path = SOURCE) -> dict:
    """Return the labelled set built from the source with this seed."""
    conversations, filler = parse(source.read_text())
    records, questions = [], []
    for conversation in conversations:
        record, asked = build_conversation(seed, conversation, filler[conversation.language])
        records.append(record)
        questions += asked
    for number, question in enumerate(questions, 1):
        question["id"] = f"l{number:03}"
    return {
        "name": "memory-console multilingual set",
        "seed": seed,
        "source": "bench/data/multilingual_source.txt",
        "built_by": "bench/multilingual_data.py",
        "grades": {"2": "the turn that answers", "1": "the other turn of its pair"},
        "conversations": records,
        "questions": questions,
    }


def main() -> None:
    """Build the set and write it, then print its summary."""
    build_and_write(build_set, SEED, SET_PATH, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
