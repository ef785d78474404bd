"""A note's markdown as safe HTML, its [[wikilinks]] as links to the notes they reach.

markdown-it-py parses with raw HTML off (a `<script>` in a note is shown as text), and nh3
sanitises what it renders all the same, so no markup of a note's author passes through:
no scripts, event attributes, `javascript:` URLs, styles or images (an image would load from
wherever its author chose the moment an operator opens the note).
"""

from collections.abc import Callable

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token

from apps.notes.paths import WIKILINK, link_target

ALLOWED_TAGS = nh3.ALLOWED_TAGS - {"img", "area", "map"}
ALLOWED_CLASSES = {"a": {"wikilink"}, "span": {"wikilink", "missing"}}
URL_SCHEMES = {"http", "https", "mailto"}


def markdown_html(content: str, *, href: Callable[[str], str | None]) -> str:
    """Return the content as sanitised HTML; href(path) is the URL of the note a link names,
    None when there is none (the link is shown as missing)."""
    parser = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    parser.core.ruler.push("wikilinks", lambda state: _wikilinks(state, href))
    html = parser.render(content)
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        allowed_classes=ALLOWED_CLASSES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
    )


def _wikilinks(state, href) -> None:
    """Turn `[[target|label]]` in text (not in code, not inside a link) into link tokens."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children, depth = [], 0
        for token in block.children:
            depth += token.type == "link_open"
            depth -= token.type == "link_close"
            if token.type == "text" and depth == 0 and "[[" in token.content:
                children += _split(token.content, href)
            else:
                children.append(token)
        block.children = children


def _split(text: str, href) -> list[Token]:
    tokens, at = [], 0
    for match in WIKILINK.finditer(text):
        path = link_target(match.group(1))
        if path is None:
            continue  # no valid path: stays text
        tokens.append(_text(text[at : match.start()]))
        label = (match.group(2) or match.group(1)).strip()
        url = href(path)
        if url is None:
            attrs = {"class": "wikilink missing", "title": f"No note at {path} yet"}
            tokens += [Token("missing_open", "span", 1, attrs=attrs), _text(label)]
            tokens.append(Token("missing_close", "span", -1))
        else:
            attrs = {"href": url, "class": "wikilink", "title": path}
            tokens += [Token("link_open", "a", 1, attrs=attrs), _text(label)]
            tokens.append(Token("link_close", "a", -1))
        at = match.end()
    tokens.append(_text(text[at:]))
    return [token for token in tokens if token.type != "text" or token.content]


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token
