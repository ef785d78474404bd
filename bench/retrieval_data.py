"""The labelled retrieval set: build it from its hand-written source, and read it back.

bench/data/retrieval_source.txt holds the text (facts stated once, their questions, near-miss
distractors, dated events, filler); this module lays it out, with a seeded RNG, as multi-session
conversations with timestamps, and writes bench/data/retrieval_set.json, which is committed.
The same seed and source always give the same file. Rebuild it with:

    .venv/bin/python bench/retrieval_data.py [--seed 20250303] [--out PATH]

Each question lists its relevant messages as (session id, turn index, grade): grade 2 is the
message that answers it, grade 1 a reply that restates the answer (supporting context).
"""

import argparse
import json
import random
import re
import string
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # apps.evaluation.dates: the placeholders' one definition
from apps.evaluation.dates import date_fields  # noqa: E402

SOURCE = HERE / "data" / "retrieval_source.txt"
SET_PATH = HERE / "data" / "retrieval_set.json"
SEED = 20250303
SESSION_OFFSETS = (0, 21, 42)  # days from a persona's start to each session's first day
DAYS_PER_SESSION = 6  # active days, picked from the session's first DAY_SPAN calendar days
DAY_SPAN = 11
PAIRS_PER_SESSION = (75, 125)  # user/assistant pairs, so 150-250 turns
PERSONA_FILLER_SHARE = 0.55  # the rest of the filler comes from the generic pool
OPENER_CHANCE = 0.8  # chance that a day starts with a dated opener
DATE_FIELDS = frozenset({"weekday", "day", "ordinal", "month", "mon"})


@dataclass
class Pair:
    """A user turn and the reply; questions about it label the turn 2 and the reply reply_grade."""

    user: str
    reply: str
    reply_grade: int = 0
    questions: list[tuple[str, str]] = field(default_factory=list)  # (type, text)
    topic: str = ""


@dataclass
class Persona:
    """One user's source text: facts, near misses, dated series, filler and day openers."""

    key: str
    meta: dict = field(default_factory=dict)
    slots: dict = field(default_factory=dict)
    facts: list[Pair] = field(default_factory=list)
    near: list[Pair] = field(default_factory=list)
    series: list[list[Pair]] = field(default_factory=list)
    filler: list[Pair] = field(default_factory=list)
    openers: list[Pair] = field(default_factory=list)


# --- Parsing the source ---------------------------------------------------------------------


def parse_source(text: str) -> dict[str, Persona]:
    """Return the personas of the source text by key (the generic pool under "generic")."""
    personas: dict[str, Persona] = {}
    persona, section, key = None, "", ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        header = re.fullmatch(r"\[(\w+)(?: ([\w-]+))?\]", line)
        if header:
            section, key = header.group(1), header.group(2) or ""
            if section == "persona":
                persona = personas[key] = Persona(key)
            elif section == "series":
                persona.series.append([])
            continue
        tag, _, value = line.partition(": ")
        if not value:
            raise ValueError(f"line {number}: expected 'tag: text', got {line!r}")
        add_line(persona, section, key, tag, value.strip())
    return personas


def add_line(persona: Persona, section: str, key: str, tag: str, value: str) -> None:
    """Add one tagged line of the source to the persona."""
    if section == "persona":
        add_meta(persona, tag, value)
    elif section == "fact":
        add_fact_line(persona, key, tag, value)
    elif section == "series":
        add_event_line(persona.series[-1], key, tag, value)
    elif section in ("filler", "openers"):
        add_pair_line(getattr(persona, section), tag, value)
    else:
        raise ValueError(f"unknown section [{section}]")


def add_meta(persona: Persona, tag: str, value: str) -> None:
    """Record a persona field (name, resource, start) or a slot's values."""
    if tag.startswith("slot "):
        persona.slots[tag.removeprefix("slot ")] = [v.strip() for v in value.split("|")]
    else:
        persona.meta[tag] = value


def add_fact_line(persona: Persona, key: str, tag: str, value: str) -> None:
    """Add a line of a [fact] block: the fact, its reply, its questions or a near miss."""
    if tag == "U":
        persona.facts.append(Pair(value, "", topic=f"fact:{key}"))
    elif tag in ("A", "A+"):
        persona.facts[-1].reply, persona.facts[-1].reply_grade = value, int(tag == "A+")
    elif tag in ("exact", "para"):
        kind = "exact" if tag == "exact" else "paraphrase"
        persona.facts[-1].questions.append((kind, value))
    elif tag == "~U":
        persona.near.append(Pair(value, "", topic=f"near:{key}"))
    elif tag == "~A":
        persona.near[-1].reply = value
    else:
        raise ValueError(f"[fact {key}]: unknown tag {tag!r}")


def add_event_line(events: list[Pair], key: str, tag: str, value: str) -> None:
    """Add a line of a [series] block: each U: starts an event."""
    if tag == "U":
        events.append(Pair(value, "", topic=f"series:{key}:{len(events) + 1}"))
    elif tag in ("A", "A+"):
        events[-1].reply, events[-1].reply_grade = value, int(tag == "A+")
    elif tag == "temporal":
        events[-1].questions.append(("temporal", value))
    else:
        raise ValueError(f"[series {key}]: unknown tag {tag!r}")


def add_pair_line(pairs: list[Pair], tag: str, value: str) -> None:
    """Add a U: or A: line of a filler or openers block."""
    if tag == "U":
        pairs.append(Pair(value, ""))
    elif tag == "A":
        pairs[-1].reply = value
    else:
        raise ValueError(f"unknown tag {tag!r} in a filler block")


# --- Laying out the conversations -----------------------------------------------------------


@dataclass
class Placed:
    """A pair placed on a day of a session."""

    pair: Pair
    session: int
    day: date


def session_days(rng: random.Random, start: date) -> list[list[date]]:
    """Return each session's active days, in order."""
    return [
        sorted(start + timedelta(offset + d) for d in rng.sample(range(DAY_SPAN), DAYS_PER_SESSION))
        for offset in SESSION_OFFSETS
    ]


def place_specials(rng: random.Random, persona: Persona, days: list[list[date]]) -> list[Placed]:
    """Place facts evenly over the sessions, near misses anywhere, each series in date order."""
    all_days = [(s, d) for s, session in enumerate(days) for d in session]
    placed = []
    facts = persona.facts[:]
    rng.shuffle(facts)
    for index, fact in enumerate(facts):
        session = index % len(days)
        placed.append(Placed(fact, session, rng.choice(days[session])))
    for near in persona.near:
        placed.append(Placed(near, *rng.choice(all_days)))
    for events in persona.series:
        chosen = sorted(rng.sample(all_days, len(events)), key=lambda sd: sd[1])
        placed.extend(Placed(event, s, d) for event, (s, d) in zip(events, chosen, strict=True))
    return placed


class Deck:
    """Draw filler pairs without repeats until the pool is used up, then reshuffle."""

    def __init__(self, rng: random.Random, pairs: list[Pair]):
        self.rng, self.pairs, self.left = rng, pairs, []

    def draw(self) -> Pair:
        """Return the next pair of the shuffled pool."""
        if not self.left:
            self.left = self.pairs[:]
            self.rng.shuffle(self.left)
        return self.left.pop()


@dataclass
class Decks:
    """One persona's filler and opener decks, shared by its sessions so repeats come weeks apart."""

    own: Deck
    shared: Deck
    openers: Deck

    @classmethod
    def of(cls, rng: random.Random, persona: Persona, generic: Persona) -> "Decks":
        """Return fresh decks over the persona's filler, the generic filler and the openers."""
        return cls(Deck(rng, persona.filler), Deck(rng, generic.filler), Deck(rng, persona.openers))


def day_plan(
    rng: random.Random, decks: Decks, days: list[date], specials: list[Placed]
) -> dict[date, list[Pair]]:
    """Return the pairs of each day of one session: an opener, the specials and filler, mixed."""
    total = rng.randint(*PAIRS_PER_SESSION)
    plan: dict[date, list[Pair]] = {day: [] for day in days}
    for placed in specials:
        plan[placed.day].append(placed.pair)
    filler_count = max(0, total - len(specials) - len(days))
    for _ in range(filler_count):
        deck = decks.own if rng.random() < PERSONA_FILLER_SHARE else decks.shared
        plan[rng.choice(days)].append(deck.draw())
    for day in days:
        rng.shuffle(plan[day])
        if rng.random() < OPENER_CHANCE:
            plan[day].insert(0, decks.openers.draw())
    return plan


def date_values(moment: datetime) -> dict[str, str]:
    """Return the date placeholders of a moment: weekday, day, ordinal, month, year, mon."""
    return {**date_fields(moment), "mon": moment.strftime("%b")}


def fill_pair(pair: Pair, values: dict[str, str], slots: dict, rng: random.Random):
    """Return the pair's (user, reply) text: dates from values, one random value per slot."""
    names = {
        name
        for template in (pair.user, pair.reply)
        for _, name, _, _ in string.Formatter().parse(template)
        if name
    }
    chosen = {n: values[n] if n in DATE_FIELDS else rng.choice(slots[n]) for n in sorted(names)}
    return pair.user.format_map(chosen), pair.reply.format_map(chosen)


def render_session(
    rng: random.Random, plan: dict[date, list[Pair]], slots: dict
) -> tuple[list[dict], dict[int, tuple[int, Pair]]]:
    """Return the session's turns and, by id of each special pair, (user turn index, pair)."""
    turns: list[dict] = []
    where: dict[int, tuple[int, Pair]] = {}
    for day, pairs in plan.items():
        moment = datetime(day.year, day.month, day.day, 8, tzinfo=UTC)
        moment += timedelta(minutes=rng.randint(0, 120))
        values = date_values(moment)
        for pair in pairs:
            user, reply = fill_pair(pair, values, slots, rng)
            if pair.topic:
                where[id(pair)] = (len(turns), pair)
            turns.append(turn("user", user, moment))
            moment += timedelta(seconds=rng.randint(5, 40))
            turns.append(turn("assistant", reply, moment))
            moment += timedelta(seconds=rng.randint(30, 480))
    return turns, where


def turn(role: str, content: str, moment: datetime) -> dict:
    """Return one turn as stored in the set."""
    return {"role": role, "content": content, "created_at": moment.isoformat()}


def build_persona(seed: int, persona: Persona, generic: Persona) -> tuple[dict, list[dict]]:
    """Return one persona's conversation and its questions."""
    rng = random.Random(f"{seed}:{persona.key}")
    start = date.fromisoformat(persona.meta["start"])
    days = session_days(rng, start)
    specials = place_specials(rng, persona, days)
    slots = {**generic.slots, **persona.slots}
    decks = Decks.of(rng, persona, generic)
    sessions, questions = [], []
    for index, session_day_list in enumerate(days):
        session_id = f"{persona.key}-s{index + 1}"
        mine = [placed for placed in specials if placed.session == index]
        plan = day_plan(rng, decks, session_day_list, mine)
        turns, where = render_session(rng, plan, slots)
        sessions.append({"id": session_id, "turns": turns})
        questions += session_questions(session_id, turns, where)
    conversation = {
        "id": persona.key,
        "user": persona.meta["name"],
        "resource": persona.meta["resource"],
        "sessions": sessions,
    }
    for question in questions:
        question["conversation"] = persona.key
    return conversation, questions


def session_questions(session_id: str, turns: list[dict], where: dict) -> list[dict]:
    """Return the questions about the special pairs of one session, with their labels."""
    questions = []
    for index, pair in where.values():
        if not pair.questions:
            continue
        moment = datetime.fromisoformat(turns[index]["created_at"])
        relevant = [{"session": session_id, "turn": index, "grade": 2}]
        if pair.reply_grade:
            relevant.append({"session": session_id, "turn": index + 1, "grade": 1})
        for kind, text in pair.questions:
            question = text.format_map(date_values(moment)) if "{" in text else text
            questions.append(
                {"type": kind, "question": question, "topic": pair.topic, "relevant": relevant}
            )
    return questions


# --- The whole set --------------------------------------------------------------------------


def build_set(seed: int = SEED, source: Path = SOURCE) -> dict:
    """Return the labelled set built from the source with this seed."""
    personas = parse_source(source.read_text())
    generic = personas.pop("generic")
    conversations, questions = [], []
    for persona in personas.values():
        conversation, asked = build_persona(seed, persona, generic)
        conversations.append(conversation)
        questions += asked
    for number, question in enumerate(questions, start=1):
        question["id"] = f"q{number:03d}"
    questions = [{"id": q.pop("id"), **q} for q in questions]
    return {
        "name": "memory-console retrieval set",
        "seed": seed,
        "source": "bench/data/retrieval_source.txt",
        "built_by": "bench/retrieval_data.py",
        "grades": {"2": "the message that answers", "1": "a reply restating the answer"},
        "conversations": conversations,
        "questions": questions,
    }


def load_set(path: Path = SET_PATH) -> dict:
    """Read a set written by this module."""
    return json.loads(Path(path).read_text())


def summary(data: dict) -> dict:
    """Return the set's counts: turns per session, questions per type, word overlap per type."""
    sessions = {s["id"]: len(s["turns"]) for c in data["conversations"] for s in c["sessions"]}
    types = Counter(q["type"] for q in data["questions"])
    return {
        "conversations": len(data["conversations"]),
        "sessions": len(sessions),
        "turns": sum(sessions.values()),
        "turns_per_session": f"{min(sessions.values())}-{max(sessions.values())}",
        "questions": dict(sorted(types.items())) | {"all": sum(types.values())},
        "answer_word_overlap": overlap_by_type(data),
    }


_STOP = frozenset(
    "a an and are as at be by can did do does for from has have how i in is it its me my of on "
    "or our so that the their this to was we what when where which who why will with you your "
    "after again before".split()
)


def content_stems(text: str) -> set[str]:
    """Return the crudely stemmed content words of a text."""
    words = re.findall(r"[^\W_]+", text.lower())
    return {re.sub(r"(ing|ed|es|s)$", "", w) or w for w in words if w not in _STOP}


def overlap_by_type(data: dict) -> dict[str, float]:
    """Return, per question type, the mean share of a question's words found in its answer."""
    text = {
        (s["id"], i): t["content"]
        for c in data["conversations"]
        for s in c["sessions"]
        for i, t in enumerate(s["turns"])
    }
    shares: dict[str, list[float]] = {}
    for question in data["questions"]:
        answer = next(r for r in question["relevant"] if r["grade"] == 2)
        asked = content_stems(question["question"])
        found = asked & content_stems(text[(answer["session"], answer["turn"])])
        shares.setdefault(question["type"], []).append(len(found) / max(1, len(asked)))
    return {kind: round(sum(v) / len(v), 2) for kind, v in sorted(shares.items())}


def build_and_write(build, seed: int, out: Path, description: str) -> None:
    """The command line of a set builder: --seed and --out, then write the set and summarise it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args()
    data = build(args.seed)
    args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    print(json.dumps(summary(data), indent=2))


def main() -> None:
    """Build the set and write it, then print its summary."""
    build_and_write(build_set, SEED, SET_PATH, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
