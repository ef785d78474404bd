"""`[[NAME: argument]]` tokens in an agent's answer: the one parser of them.

`[[MEMORY: fact]]` stores a fact (apps.episodic.memory_actions); any other name is an action
recorded on the thread and, when the project configures a webhook for it, delivered there
(apps.actions). Both read tokens through action_tokens(), so they agree on what a token is.
"""

import re
from dataclasses import dataclass

# A name is upper case (TRIGGER_SPEC); an argument is anything up to the first `]]`, trimmed,
# but never holds `[[`: in `[[A: x [[MEMORY: y]]` the MEMORY token is the one that closes.
TOKEN = re.compile(r"\[\[([A-Z][A-Z0-9_]{0,63}):\s*((?:(?!\[\[).)+?)\s*\]\]", re.DOTALL)


@dataclass(frozen=True)
class ActionToken:
    name: str
    argument: str
    written: str  # the token as it stands in the text


def action_tokens(text: str, *, name: str | None = None) -> list[ActionToken]:
    """Return the tokens of text in order; name keeps only the tokens of that name."""
    found = [
        ActionToken(match.group(1), match.group(2), match.group(0))
        for match in TOKEN.finditer(text)
    ]
    return [token for token in found if name is None or token.name == name]
