"""What a conversational message says that is worth remembering, sentence by sentence.

A message of conversation (not a tool step) is split into sentences (core.sentences, which
never splits a decimal, a version, a URL or an abbreviation) and each is judged on its own:

- a request, when a user asks the agent something (a question, or an instruction such as
  "Give me…", "Please…", "Can you…"): kept verbatim, as said;
- small talk (greetings, thanks, acknowledgements, "Sounds good!"): dropped;
- a statement: kept when it carries something to remember — an identifier, a number, a
  date or time, a URL or path, a name (a capitalised word inside the sentence), a first-person
  fact ("I moved to…", "my sister…"), a plan or commitment ("will", "going to", "tomorrow"),
  a preference or feeling about something ("love", "prefer", "allergic"), or a decision —
  its prose cut short with every fact kept (extractive's cut); otherwise dropped.

The rules hold for whatever role a message was logged with: in a conversation between people
both sides state facts. Only the user's side makes requests of the agent.
"""

import re

from apps.core.sentences import sentences

# Words that alone, in any number, make small talk: a sentence of nothing else is dropped.
_SMALL_TALK = frozenset(
    """hi hello hey hiya yo morning evening afternoon good thanks thank thx ty you so much a lot
    very ok okay k sure great cool awesome nice perfect fine got it sounds lovely wonderful
    amazing excellent fantastic brilliant right yes yeah yep yup no nope nah oh ah wow hmm haha
    lol welcome np problem bye goodbye see ya later cheers have day one weekend all the best
    again glad happy help to hear that's that is it's makes sense absolutely definitely of
    course indeed agreed true exactly alright anytime pleasure my i'm i am ill i'll will do
    care take""".split()
)
_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_REQUEST_START = re.compile(
    r"^(please|pls|can you|could you|would you|will you|can i|could i|how|what|which|where|"
    r"when|who|why|is there|are there|do you|does|did|should|help|give|tell|show|explain|"
    r"write|draft|make|suggest|recommend|list|find|check|create|send|book|remind|set|add|"
    r"remove|delete|update|summari[sz]e|translate|compare|plan|calculate|convert|fix|"
    r"reconcile|report|describe|share|let me know|i need you|i want you|i'd like you)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b", re.I)
_PLAN_OR_FEELING = re.compile(
    r"\b(will|won't|going to|gonna|plan(?:ning|ned)?|intend|tomorrow|tonight|next|last|"
    r"yesterday|ago|since|until|by|deadline|schedule[d]?|booked|promised|remember|"
    r"love[sd]?|hate[sd]?|like[sd]?|dislike[sd]?|prefer(?:s|red)?|enjoy(?:s|ed)?|favou?rite|"
    r"allergic|afraid|worried|excited|miss(?:ed)?|want(?:s|ed)?|need(?:s|ed)?|decided|chose|"
    r"agreed|moved|started|stopped|finished|bought|sold|joined|left|married|born|works?|"
    r"lives?|living|studying|learning|birthday|anniversary|always|never|usually)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<=[\w,;:)] )[A-Z][\w'’-]+")  # a capitalised word inside a sentence
_DIGIT = re.compile(r"\d")


def is_request(sentence: str) -> bool:
    """Whether a user's sentence asks the agent something: a question or an instruction."""
    text = sentence.strip().strip("\"'“”‘’")
    return text.endswith("?") or bool(_REQUEST_START.match(text))


def is_small_talk(sentence: str) -> bool:
    """Whether the sentence is nothing but greetings, thanks or acknowledgements."""
    words = [word.lower() for word in _WORDS.findall(sentence)]
    return not _DIGIT.search(sentence) and all(word in _SMALL_TALK for word in words)


def is_informative(sentence: str, facts) -> bool:
    """Whether a statement carries something to remember (see the module's rules).

    facts(text) returns the identifiers, numbers, dates, URLs and paths text holds.
    """
    if is_small_talk(sentence):
        return False
    return bool(
        facts(sentence)
        or _NAME.search(sentence)
        or _PLAN_OR_FEELING.search(sentence)
        or (_FIRST_PERSON.search(sentence) and len(_WORDS.findall(sentence)) >= 4)
    )


def statement_parts(text: str, *, requests: bool, facts) -> list[tuple[str, str]]:
    """Return the sentences of text worth keeping, each as ("request" | "statement", sentence).

    requests: whether this side may ask the agent (the user's). facts: as for is_informative.
    """
    kept = []
    for sentence in sentences(text):
        asks = requests and is_request(sentence)
        if asks and (sentence.rstrip("\"'“”‘’").endswith("?") or not is_small_talk(sentence)):
            kept.append(("request", sentence))
        elif is_informative(sentence, facts):
            kept.append(("statement", sentence))
    return kept
