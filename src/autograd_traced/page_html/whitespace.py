"""Drop the indentation of a page's HTML lines, outside <pre>, <textarea> and attribute
values: the templates indent every line, and a browser collapses that whitespace anyway (a
newline stays, so two inline elements on separate lines keep their space). A few KB on every
page's budget."""

from __future__ import annotations

import re

# Also attribute values: a console block's copy text (data-copy) keeps its indentation.
_KEPT = re.compile(r'(<pre\b.*?</pre>|<textarea\b.*?</textarea>|="[^"]*")', re.DOTALL)
_INDENT = re.compile(r"\n[ \t]+")


def strip_indentation(page_html: str) -> str:
    parts = _KEPT.split(page_html)
    return "".join(part if i % 2 else _INDENT.sub("\n", part) for i, part in enumerate(parts))
