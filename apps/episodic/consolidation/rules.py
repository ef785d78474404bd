"""Which sentences of a conversation are worth a memory entry, by rules (no model).

A sentence is worth keeping when it carries enough information and says something about the
user or the task that a later conversation may need:
  1. Minimum information: at least MIN_WORDS words, MIN_CONTENT_WORDS of them content words
     (three letters or more, not a stop word), so "more filler 0" or "ok see you" never qualify.
  2. Not a question, and not a request ("Give me…", "Translate…", "I need a…") unless it
     changes a named thing ("Please change the billing address to Keizersgracht 221").
  3. Signals, each counted once: a specific (a digit, an identifier such as billing-api or
     eu-west-1, a capitalised name that does not start the sentence), a date or time phrase,
     a memorable verb or noun (preferences, decisions, commitments, changes, plans: prefer,
     allergic, decided, booked, moved, deadline, will…), a person of the user's life (son,
     boss, neighbour…) and, for the user, speaking of themselves (I, my, we, our).
     A user's sentence needs KEEP_SCORE of them; an assistant's must be a first-person
     decision or outcome ("I deployed…", "we decided…") with a specific.
Rules, not a model: they are conservative (a sentence they cannot place is left out), and the
fallback's tests cover them (tests/episodic/test_consolidation.py).
"""

import re

MIN_WORDS = 4
MIN_CONTENT_WORDS = 3
KEEP_SCORE = 2

# A word, with what joins its parts kept: v2.3, 10.0.0.5, eu-west-1, don't.
_WORD = re.compile(r"[\w'’-]+(?:[.:/@][\w'’-]+)*", re.UNICODE)
_STOP = frozenset(
    """the and for but not are was were been being has have had does did doing this that these
    those with from into onto about over under than then them they their there here what which
    who whom whose when where why how all any both each few more most other some such only own
    same very can will just should could would might must shall its it's i'm i've i'll i'd you
    your yours you're our ours out off too also again once upon more filler lot lots thing things
    stuff get got gets really much many one yes yeah okay well let let's now still even""".split()
)
_QUESTION_START = re.compile(
    r"^(?:can|could|would|will|should|shall|do|does|did|is|are|was|were|have|has|what|which|"
    r"who|whom|whose|when|where|why|how|any|anything)\b",
    re.IGNORECASE,
)
# Requests: the agent is asked to do or produce something, which is no fact about the user.
_REQUEST_START = re.compile(
    r"^(?:please\s+)?(?:give|suggest|write|recommend|help|translate|review|summari[sz]e|check|"
    r"tell|explain|show|list|draft|find|look|search|compare|describe|rewrite|fix|restart|run|"
    r"remind|send|create|generate|make\s+me|let\s+me|i\s+(?:need|want|would\s+like)\s+(?:a|an|"
    r"some|to\s+know|ideas|help|advice)\b|sorry\b|thanks\b|thank\s+you\b)",
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(r"\b[\w]+(?:[-_./:@][\w]+)+\b|\d")
_DIGIT = re.compile(
    r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
    r"fifty|hundred|thousand|million)\b",
    re.IGNORECASE,
)
_DATE = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|"
    r"may|june|july|august|september|october|november|december|tomorrow|tonight|yesterday|"
    r"(?:next|last|this|every)\s+(?:week|month|year|weekend|night|morning|time)|weekly|daily|"
    r"monthly|overnight|deadline|by\s+the\s+\w+)\b",
    re.IGNORECASE,
)
_MEMORABLE = re.compile(
    r"\b(?:prefer\w*|favou?rite|allergic|allergy|love|loves|hate|hates|can't\s+stand|always|never|"
    r"usually|birthday|anniversary|married|pregnant|vegetarian|vegan|live|lives|moved|move|born|"
    r"name\s+is|called|decided?|decision|chose|choose|chosen|agreed|agree|booked|book|scheduled|"
    r"deadline|due|expires?|budget|owns|owner|promised|plan|planning|going\s+to|will|'ll|won't|"
    r"away|leave|starts?|delayed|approved|upgraded|finished|changed?|switch\w*|set|raise|"
    r"rather|instead|from\s+now\s+on|no\s+longer|anymore|quit|joined|left|hired|fired|works?\s+"
    r"(?:at|for|as|in)|responsible|runs|costs?|paid|charged|wants?|euros?|dollars?|pounds?|eur|usd|"
    r"gbp|percent|years?\s+old|interest|salary|price|contract\w*|lost|broke|broken|stuck|"
    r"fell|fall|diagnosed|hospital|upgrade|exception|outage|incident)\b|[€$£%]",
    re.IGNORECASE,
)
_RELATION = re.compile(
    r"\b(?:son|daughter|kids?|children|child|wife|husband|partner|girlfriend|boyfriend|mother|"
    r"mum|mom|father|dad|sister|brother|grand\w+|aunt|uncle|cousin|boss|manager|colleague|"
    r"coworker|friend|neighbou?r|team|supervisor|client|customer|landlord|doctor|family)\b",
    re.IGNORECASE,
)
# What a request that is worth remembering asks: to change a setting, a name, an address.
_CHANGE = re.compile(
    r"\b(?:change|set|raise|lower|remove|cancel|add|switch|move|make\s+it|keep|update|rename|"
    r"replace|transfer|assign|unsubscribe|stop|start|from\s+now\s+on|always|never)\b",
    re.IGNORECASE,
)
_SELF = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|my|mine|we|we're|we've|we'll|our|us)\b", re.I)
_FIRST_PERSON_OUTCOME = re.compile(
    r"\b(?:i|we|i've|we've|i\s+have|we\s+have)\s+(?:just\s+|now\s+|also\s+)?(?:decided|agreed|"
    r"chose|switched|fixed|resolved|deployed|released|shipped|created|completed|finished|merged|"
    r"migrated|installed|rolled\s+back|booked|scheduled|cancelled|canceled|refunded|updated|"
    r"changed|moved|set|raised|removed|added|renamed|upgraded|restarted|silenced|"
    r"will\s+use)\b|\b(?:we'll|i'll)\s+use\b|\bdecision\b",
    re.IGNORECASE,
)


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def content_words(text: str) -> list[str]:
    """Return the words of text that carry meaning: three letters or more, not stop words."""
    return [
        word.lower()
        for word in words(text)
        if len(word) >= 3 and not word.isdigit() and word.lower() not in _STOP
    ]


def has_minimum_information(text: str) -> bool:
    """Whether text has words enough to be worth a memory entry at all."""
    return len(words(text)) >= MIN_WORDS and len(content_words(text)) >= MIN_CONTENT_WORDS


def is_question(sentence: str) -> bool:
    stripped = sentence.rstrip(" \"'”’)")
    return stripped.endswith("?")


def has_specific(sentence: str) -> bool:
    """Whether the sentence names something: a number, an identifier, a date or a name."""
    if _IDENTIFIER.search(sentence) or _DATE.search(sentence):
        return True
    return bool(_names(sentence))


def _names(sentence: str) -> list[str]:
    """Capitalised words after the first (names, places, products), "I" left out."""
    found = words(sentence)[1:]
    return [w for w in found if w[0].isupper() and w.lower() not in _SELF_WORDS]


_SELF_WORDS = frozenset({"i", "i'm", "i've", "i'll", "i'd", "ok"})


def user_sentence_score(sentence: str) -> int:
    """Count the signals that make a user's sentence worth remembering (0: none)."""
    if not has_minimum_information(sentence) or is_question(sentence):
        return 0
    specific = has_specific(sentence)
    if _REQUEST_START.match(sentence.strip()) and not (specific and _CHANGE.search(sentence)):
        return 0  # a request is remembered only when it changes a named thing
    if _QUESTION_START.match(sentence.strip()) and not specific:
        return 0
    return sum(
        (
            bool(_DIGIT.search(sentence)),
            bool(_IDENTIFIER.search(_DIGIT.sub("", sentence))) or bool(_names(sentence)),
            bool(_DATE.search(sentence)),
            bool(_MEMORABLE.search(sentence)),
            bool(_RELATION.search(sentence)),
            bool(_SELF.search(sentence)),
        )
    )


def user_sentence_kept(sentence: str) -> bool:
    return user_sentence_score(sentence) >= KEEP_SCORE


def assistant_sentence_kept(sentence: str) -> bool:
    """Whether an assistant's sentence reports its own decision or outcome, with a specific."""
    return (
        has_minimum_information(sentence)
        and not is_question(sentence)
        and bool(_FIRST_PERSON_OUTCOME.search(sentence))
        and has_specific(sentence)
    )
