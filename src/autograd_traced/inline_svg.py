"""Keep a page's inline SVG away from the search plugin, which reads every page's HTML.

The diagrams are most of a page's markup: parsing them took the search plugin a third of a
40-page build, and indexed every label of every graph. So the hook sets them aside after
rendering (`set_aside`), leaving each diagram's text alternative, once, where the search
plugin reads it, and puts them back when the page is written (`put_back`).
"""

from __future__ import annotations

import html
import re

_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
# The text alternative: the accessible name, else the title.
_ALT = re.compile(r'^<svg\b[^>]*\baria-label="([^"]*)"|<title>(.*?)</title>', re.DOTALL)
_PLACEHOLDER = re.compile(r'<span data-autograd-svg="(\d+)">.*?</span>', re.DOTALL)


def set_aside(page_html: str) -> tuple[str, list[str]]:
    svgs: list[str] = []

    def placeholder(match: re.Match[str]) -> str:
        svgs.append(match.group(0))
        alt = _ALT.search(match.group(0))
        text = (alt.group(1) or alt.group(2) or "") if alt else ""
        words = html.escape(html.unescape(text), quote=False)
        return f'<span data-autograd-svg="{len(svgs) - 1}">{words}</span>'

    return _SVG.sub(placeholder, page_html), svgs


def put_back(page_html: str, svgs: list[str]) -> str:
    return _PLACEHOLDER.sub(lambda match: svgs[int(match.group(1))], page_html)
