"""What the search index holds: math as readable text, and no tab labels run into code titles.

The search plugin reads a page before its math is rendered (page_html.katex runs last), so
the index holds TeX such as `\\(\\frac{\\partial L}{\\partial b}\\)`. After the build wrote
the index, `readable_index` turns each formula into the text a reader sees: `∂L/∂b`. A TeX
command without a reading here is an error, so a new formula cannot slip into previews as TeX.
"""

from __future__ import annotations

import html
import json
import re

# How the search index keeps pymdownx.arithmatex's formulas: \( inline \) and \[ display \].
INDEXED_MATH_RE = re.compile(r"\\\((?P<inline>.*?)\\\)|\\\[(?P<display>.*?)\\\]", re.DOTALL)
# A control word swallows the spaces after it, as in TeX; SYMBOLS says how each one reads.
TOKEN_RE = re.compile(r"\\[A-Za-z]+\s*|\\.|\s+|.", re.DOTALL)
# Material's tab labels, which the index would otherwise run into the block's title.
TAB_LABELS = '<div class="tabbed-labels">'

SYMBOLS = {
    r"\partial": "∂",
    r"\sigma": "\N{GREEK SMALL LETTER SIGMA}",
    r"\log": "log ",
    r"\cdot": " · ",
    r"\times": " \N{MULTIPLICATION SIGN} ",
    r"\Longrightarrow": " ⟹ ",
    r"\qquad": " ",
    r"\quad": " ",
    r"\allowbreak": "",  # where a phone may break a long display
    r"\,": " ",
    r"\big": "",
    r"\Big": "",
    r"\left": "",
    r"\right": "",
}
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


class MathTextError(Exception):
    """A formula uses a TeX command this module cannot read aloud."""


def exclude_tab_labels(page_html: str) -> str:
    """Keep tab labels ("Console", "State after each line") out of the index: they are not
    content, and the index would glue them to the code block's title."""
    return page_html.replace(TAB_LABELS, TAB_LABELS[:-1] + ' data-search-exclude="labels">')


def readable_index(index_json: str) -> str:
    """The search index with every formula in its titles and texts as readable text."""
    index = json.loads(index_json)
    for doc in index["docs"]:
        for key in ("title", "text"):
            doc[key] = INDEXED_MATH_RE.sub(_readable_match, doc[key])
    return json.dumps(index, separators=(",", ":"))  # as Material writes it


def tex_to_text(tex: str) -> str:
    """`\\frac{\\partial L}{\\partial b}` -> `∂L/∂b`, `x_1` -> `x₁`, `e^{-z}` -> `e^(-z)`."""
    tokens = TOKEN_RE.findall(tex)
    tokens.reverse()  # consumed from the end, as a stack
    return re.sub(r"\s+", " ", _sequence(tokens, tex)).strip()


def _readable_match(match: re.Match[str]) -> str:
    tex = html.unescape(match.group("inline") or match.group("display") or "")
    return html.escape(tex_to_text(tex), quote=False)


def _sequence(tokens: list[str], tex: str) -> str:
    parts = []
    while tokens and tokens[-1] != "}":
        parts.append(_element(tokens, tex))
    return "".join(parts)


def _element(tokens: list[str], tex: str) -> str:
    token = tokens.pop()
    if token == "{":
        inner = _sequence(tokens, tex)
        if tokens:
            tokens.pop()  # the closing brace
        return inner
    if token.rstrip() == r"\frac":
        numerator, denominator = _argument(tokens, tex), _argument(tokens, tex)
        return f"{_grouped(numerator)}/{_grouped(denominator)}"
    if token == "_":
        text = _argument(tokens, tex)
        return text.translate(SUBSCRIPTS) if text.isdigit() else f"_{_grouped(text)}"
    if token == "^":
        text = _argument(tokens, tex)
        return text.translate(SUPERSCRIPTS) if text.isdigit() else f"^{_grouped(text)}"
    if token.startswith("\\") and len(token) > 1:
        token = token.rstrip()
        if token not in SYMBOLS:
            raise MathTextError(f"no readable text for {token} in the formula {tex!r}")
        return SYMBOLS[token]
    return token


def _argument(tokens: list[str], tex: str) -> str:
    while tokens and tokens[-1].isspace():
        tokens.pop()
    return _element(tokens, tex) if tokens and tokens[-1] != "}" else ""


def _grouped(text: str) -> str:
    """Parenthesized when it has several terms, so `1/(1 + e^(-z))` reads as it means."""
    text = text.strip()
    several_terms = len(text) > 1 and re.search(r"[\s+\-=/·\N{MULTIPLICATION SIGN}]", text)
    return f"({text})" if several_terms else text
