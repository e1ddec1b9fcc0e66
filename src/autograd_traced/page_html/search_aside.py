"""Keep from the search plugin what it has no use for, which it would parse on every page.

The search plugin reads every page's HTML. Three kinds of markup are most of it and give the
index nothing: diagrams (every label of every graph), the executed transcripts and the
players' parts marked `data-search-exclude` (the plugin skips their text but still parses
each of their tags).
Parsing them took a third of a 40-page build. So the plugin sets them aside once the page is
rendered (`set_aside`), leaving each diagram's text alternative, once, where the plugin
reads it, and puts them back when the page is written (`put_back`).
"""

from __future__ import annotations

import html
import re

# A diagram, or a transcript or player's part the index skips (none nests its own tag; attribute
# values are escaped, so hold no `>`).
_ASIDE = re.compile(
    r"<svg\b.*?</svg>"
    r'|<(?P<tag>div|ol|ul|p|figure) class="(?:ag-tracer__[\w-]+|highlight)"'
    r" data-search-exclude\b[^>]*>.*?</(?P=tag)>",  # [^>]*: a transcript's data-copy
    re.DOTALL,
)
# A diagram's text alternative: its accessible name, else its title.
_ALT = re.compile(r'^<svg\b[^>]*\baria-label="([^"]*)"|<title>(.*?)</title>', re.DOTALL)
_PLACEHOLDER = re.compile(r'<span data-autograd-aside="(\d+)">.*?</span>', re.DOTALL)


def set_aside(page_html: str) -> tuple[str, list[str]]:
    aside: list[str] = []

    def placeholder(match: re.Match[str]) -> str:
        aside.append(match.group(0))
        alt = _ALT.search(match.group(0)) if match.group("tag") is None else None
        words = html.escape(html.unescape((alt.group(1) or alt.group(2) or "") if alt else ""))
        return f'<span data-autograd-aside="{len(aside) - 1}">{words}</span>'

    return _ASIDE.sub(placeholder, page_html), aside


def put_back(page_html: str, aside: list[str]) -> str:
    return _PLACEHOLDER.sub(lambda match: aside[int(match.group(1))], page_html)
