"""Each line of code in a console block, from its prompt (`>>> ` or `... `) to its newline,
in a span of its own: reading.css indents a line that wraps after its first row, so it does
not read as a new statement under the prompt, and the players mark examples by these spans.

Written into the HTML, not by a script at load: on a phone, wrapping the lab's 264 lines in
the browser re-laid out the whole page in every slice of work (a third of a second of
Lighthouse's blocking time), and a reader without JavaScript gets the indent too. Pygments'
spans are flat (no span inside another), so a line is its prompt's span and what follows
it up to the first newline of a text between spans.
"""

from __future__ import annotations

import re

LINE_CLASS = "ag-code-line"
_PROMPT = '<span class="gp">'
_CODE = re.compile(r"(<code>)(.*?)(</code>)", re.DOTALL)
_PIECE = re.compile(r"<span\b[^>]*>[^<]*</span>|<[^>]*>|[^<]+")


def _lines(code: str) -> str:
    if _PROMPT not in code:
        return code
    pieces = _PIECE.findall(code)
    out: list[str] = []
    line: list[str] | None = None  # the line being gathered, from its prompt
    for piece in pieces:
        if piece.startswith(_PROMPT):
            if line is not None:  # a prompt before a newline (not from Pygments): close it
                out.append(f'<span class="{LINE_CLASS}">{"".join(line)}</span>')
            line = [piece]
            continue
        if line is None:
            out.append(piece)
            continue
        end = piece.find("\n") if not piece.startswith("<") else -1
        if end < 0:
            line.append(piece)
            continue
        line.append(piece[: end + 1])
        out.append(f'<span class="{LINE_CLASS}">{"".join(line)}</span>')
        line = None
        out.append(piece[end + 1 :])
    if line is not None:
        out.append(f'<span class="{LINE_CLASS}">{"".join(line)}</span>')
    return "".join(out)


def wrap_code_lines(page_html: str) -> str:
    return _CODE.sub(lambda match: match[1] + _lines(match[2]) + match[3], page_html)
